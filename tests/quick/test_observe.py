import os

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import structs
from fuzzer.observe import Entries, Entry, Manifest, hash_file, matches_any, take_manifest

names = st.text(alphabet="abcxyz._-", min_size=1, max_size=8).filter(lambda n: n not in (".", ".."))
trees = st.dictionaries(st.lists(names, min_size=1, max_size=3).map("/".join), st.binary(max_size=300), max_size=12)


def write_tree(root, tree):
    written = {}
    for rel, data in tree.items():
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written[rel] = data
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a file and a directory of the same name: skip this one
    return {rel: data for rel, data in written.items() if (root / rel).is_file() and (root / rel).read_bytes() == data}


@settings(max_examples=40, deadline=None)
@given(trees)
def test_manifest_lists_every_file_with_its_digest(tmp_path_factory, tree):
    root = tmp_path_factory.mktemp("tree")
    written = write_tree(root, tree)
    manifest = take_manifest(root)
    assert set(manifest.entries) == set(written)
    for rel in written:
        assert manifest.entries[rel].digest == hash_file(str(root / rel))
    assert Manifest(structs.decode(structs.encode(manifest.entries), Entries)) == manifest


def test_symlinks_are_recorded_not_followed(tmp_path):
    (tmp_path / "a").write_text("x")
    os.symlink("/etc/passwd", tmp_path / "out")
    os.symlink("/", tmp_path / "root")
    m = take_manifest(tmp_path)
    assert m.entries["out"] == Entry("symlink", "/etc/passwd", mtime_ns=m.entries["out"].mtime_ns)
    assert set(m.entries) == {"a", "out", "root"}


def test_exec_bit_changes_identity(tmp_path):
    (tmp_path / "tool").write_text("#!/bin/sh\n")
    before = take_manifest(tmp_path)
    os.chmod(tmp_path / "tool", 0o755)
    after = take_manifest(tmp_path)
    assert before.digest() != after.digest()
    assert before.differing(after) == ["tool"]


def test_mtime_is_not_identity(tmp_path):
    (tmp_path / "f").write_text("same")
    before = take_manifest(tmp_path)
    os.utime(tmp_path / "f", (1, 1))
    assert take_manifest(tmp_path).digest() == before.digest()


@given(st.dictionaries(names, st.sampled_from(["d1", "d2", "d3"])), st.dictionaries(names, st.sampled_from(["d1", "d2"])))
def test_differing_is_symmetric_and_exact(a, b):
    ma = Manifest({p: Entry("file", d) for p, d in a.items()})
    mb = Manifest({p: Entry("file", d) for p, d in b.items()})
    assert ma.differing(mb) == mb.differing(ma)
    assert set(ma.differing(mb)) == {p for p in a.keys() | b.keys() if a.get(p) != b.get(p)}
    assert (ma.digest() == mb.digest()) == (a == b)


def test_globs():
    assert matches_any("build/.ninja_log", ["**/.ninja_log"])
    assert matches_any(".ninja_log", ["**/.ninja_log"])
    assert matches_any("deep/dir/x.o", ["*.o"])
    assert matches_any("lib/libops.a", ["lib/*.a"])
    assert not matches_any("lib/libops.so", ["lib/*.a"])


def test_only_the_names_given_are_looked_at_and_manifests_join(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "a.o").write_text("a\n")
    (tmp_path / "pkg.deb").write_text("deb\n")
    os.mkfifo(tmp_path / "not-listed")  # never opened, since never looked at
    beside = take_manifest(tmp_path, only=["pkg.deb"])
    assert sorted(beside.entries) == ["pkg.deb"]
    joined = take_manifest(tmp_path / "tree").joined(Manifest({"../" + p: e for p, e in beside.entries.items()}))
    assert sorted(joined.entries) == ["../pkg.deb", "a.o"]
