"""Step replays away from the traced tree (a Dask worker's): the files a step looked at,
by digest, and nothing else; the cache that keeps a host from being sent a file twice.
The replays on a real cluster are in tests/realbuild/test_replay_dask_real.py."""

from __future__ import annotations

import hashlib
import os

import pytest

from fuzzer.execute.step_files import FileCache, build_tree, digests, step_files
from fuzzer.execute.step_replay import StepCall
from fuzzer.observe import Entry, Manifest


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def entry(text: str, executable: bool = False) -> Entry:
    return Entry("file", sha(text), executable, len(text), 1_600_000_000_000_000_000)


MANIFEST = Manifest({
    "gen.py": entry("gen"), "data/a.txt": entry("a"), "data/b.txt": entry("b"), "data/sub/c.txt": entry("c"),
    "out.txt": entry("old out"), "big.bin": entry("never read"), "tool": entry("tool", executable=True),
    "link": Entry("symlink", "gen.py"), "../pkg.deb": entry("beside"),
})


def call(**fields) -> StepCall:
    base = dict(argv=("python3", "gen.py"), cwd=".", env={}, exit_code=0, restored=("out.txt",),
                compared=("out.txt",))
    return StepCall(**{**base, **fields})


def test_a_step_is_given_what_it_read_probed_listed_and_wrote_and_nothing_else():
    files = step_files(call(looked_at=("gen.py", "link", ".", "tool", "/usr/bin/python3", "../pkg.deb", "missing.h"),
                            listed=("data",)), MANIFEST)
    assert {f.path: f.kind for f in files} == {
        ".": "dir", "gen.py": "file", "link": "symlink", "tool": "file", "out.txt": "file",  # a probe of "." lists nothing
        "data": "dir", "data/a.txt": "file", "data/b.txt": "file", "data/sub": "dir"}  # a listing shows sub/, empty
    assert sha("never read") not in digests(files) and sha("beside") not in digests(files)
    assert sha("c") not in digests(files)  # inside a listed directory's subdirectory: not listed
    assert digests(files)[sha("gen")] == "gen.py"


def test_the_step_tree_has_the_traced_bytes_modes_and_mtimes(tmp_path):
    cache = FileCache(tmp_path / "cache")
    files = step_files(call(looked_at=("gen.py", "tool", "link"), cwd="data"), MANIFEST)
    for digest in cache.missing(sorted(digests(files))):
        cache.put(digest, next(t for t in ("gen", "tool", "old out") if sha(t) == digest).encode())
    assert cache.missing(sorted(digests(files))) == []
    tree = tmp_path / "tree"
    build_tree(tree, files, cache)
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")) == [
        "data", "gen.py", "link", "out.txt", "tool"]
    assert (tree / "gen.py").read_text() == "gen" and os.readlink(tree / "link") == "gen.py"
    assert os.access(tree / "tool", os.X_OK) and not os.access(tree / "gen.py", os.X_OK)
    assert (tree / "gen.py").stat().st_mtime_ns == 1_600_000_000_000_000_000
    (tree / "out.txt").write_text("a replay wrote this")
    assert cache.path(sha("old out")).read_text() == "old out"  # copies: the cache keeps the traced bytes


def test_the_cache_refuses_bytes_that_are_not_their_digest(tmp_path):
    cache = FileCache(tmp_path / "cache")
    with pytest.raises(ValueError, match="not that file"):
        cache.put(sha("a"), b"changed since the manifest")
    assert cache.missing([sha("a")]) == [sha("a")]


def test_a_file_set_never_holds_paths_outside_the_tree():
    files = step_files(call(looked_at=("/etc/passwd", "../pkg.deb"), listed=("/usr/lib",), restored=("/tmp/x.whl",),
                            cwd="/tmp"), MANIFEST)
    assert files == ()
