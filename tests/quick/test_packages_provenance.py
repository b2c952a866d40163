"""A package member leads back to the file it was made from, and a plain copy to the file
it read (fuzzer/compare/listing.py, trace/writers.copies, explain/writer.provenance)."""

from __future__ import annotations

import io
import shutil
import tarfile
import textwrap
import zipfile
from pathlib import Path

from fuzzer.compare.listing import file_members
from fuzzer.explain.writer import provenance
from fuzzer.observe import Entry, Manifest, hash_file
from fuzzer.trace.parse import parse_lines
from fuzzer.trace.processes import track_processes
from fuzzer.trace.steps import build_trace
from fuzzer.trace.writers import copies, writer_of

WS = "/ws"


def trace(text: str):
    lines = textwrap.dedent(text).strip().splitlines(keepends=True)
    return build_trace(track_processes(parse_lines(lines), WS), WS)


# One packaging step (sh package.sh under the build's driver): gen.py writes build/foo.map,
# dd copies it by plain reads and writes into the staging tree, tar packs the stage into
# pkg.tar beside the tree.
PACKAGE = """
    1 1.0 execve("/bin/sh", ["sh", "build.sh"], 0x1 /* 1 vars */) = 0
    1 1.1 clone(child_stack=NULL) = 2
    2 1.2 execve("/bin/sh", ["sh", "./package.sh"], 0x1 /* 1 vars */) = 0
    2 1.3 clone(child_stack=NULL) = 3
    3 1.4 execve("/usr/bin/python3", ["python3", "gen.py", "build/foo.map"], 0x1 /* 1 vars */) = 0
    3 1.5 openat(AT_FDCWD</ws>, "gen.py", O_RDONLY) = 3</ws/gen.py>
    3 1.6 openat(AT_FDCWD</ws>, "build/foo.map", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/build/foo.map>
    3 1.7 +++ exited with 0 +++
    2 1.8 clone(child_stack=NULL) = 4
    4 1.9 execve("/usr/bin/dd", ["dd", "if=build/foo.map", "of=stage/usr/foo.map"], 0x1 /* 1 vars */) = 0
    4 2.0 openat(AT_FDCWD</ws>, "build/foo.map", O_RDONLY) = 3</ws/build/foo.map>
    4 2.1 openat(AT_FDCWD</ws>, "stage/usr/foo.map", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4</ws/stage/usr/foo.map>
    4 2.2 +++ exited with 0 +++
    2 2.3 clone(child_stack=NULL) = 5
    5 2.4 execve("/usr/bin/tar", ["tar", "-C", "stage", "-cf", "../pkg.tar", "usr"], 0x1 /* 1 vars */) = 0
    5 2.5 openat(AT_FDCWD</ws>, "stage/usr/foo.map", O_RDONLY) = 4</ws/stage/usr/foo.map>
    5 2.6 openat(AT_FDCWD</ws>, "../pkg.tar", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</pkg.tar>
    5 2.7 +++ exited with 0 +++
    2 2.8 +++ exited with 0 +++
    1 2.9 +++ exited with 0 +++
"""
MAP = b"0 blit__local3\n1 blit__local0\n"
DIGEST = "a" * 32  # what the manifests give foo.map (the listing's digest is the real one)


def _tar(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _as_manifest(tmp_path: Path, name: str, data: bytes) -> str:
    """The digest take_manifest gives a file of that name holding `data`."""
    path = tmp_path / "as-manifest" / name.rsplit("/", 1)[-1]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return hash_file(str(path))


def test_nested_members_are_listed_by_name_and_the_manifests_digest(tmp_path):
    import lzma

    inner = lzma.compress(_tar({"./usr/lib/libfoo.so": b"\x7fELF so", "./usr/share/doc/x": b"doc"}))
    deb = tmp_path / "x.deb"
    body = b"2.0\n"
    ar = [b"!<arch>\n"]
    for name, data in ((b"debian-binary", body), (b"data.tar.xz", inner)):
        ar.append(name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"100644".ljust(8)
                  + str(len(data)).encode().ljust(10) + b"`\n" + data + (b"\n" if len(data) % 2 else b""))
    deb.write_bytes(b"".join(ar))
    listed = file_members(str(deb))
    assert listed == {"debian-binary": _as_manifest(tmp_path, "debian-binary", body),
                      "data.tar.xz/usr/lib/libfoo.so": _as_manifest(tmp_path, "libfoo.so", b"\x7fELF so"),
                      "data.tar.xz/usr/share/doc/x": _as_manifest(tmp_path, "x", b"doc")}


def test_a_hostile_or_plain_file_lists_nothing(tmp_path):
    (tmp_path / "x.txt").write_text("not an archive")
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    evil = tmp_path / "evil.whl"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../../etc/passwd", "x")
    assert file_members(str(tmp_path / "x.txt")) == {} and file_members(str(tmp_path / "bad.zip")) == {}
    assert file_members(str(evil)) == {}


def test_a_plain_copy_is_a_write_with_the_bytes_the_process_read():
    t = trace(PACKAGE)
    digests = {"build/foo.map": DIGEST, "stage/usr/foo.map": DIGEST, "gen.py": "b" * 64, "../pkg.tar": "c" * 64}
    found = copies(t, digests)
    assert {path: source for path, (source, _) in found.items()} == {"stage/usr/foo.map": "build/foo.map"}
    assert copies(t, {**digests, "stage/usr/foo.map": "d" * 64}) == {}  # other bytes: no copy


def _manifests(tmp_path: Path):
    digest = _as_manifest(tmp_path, "foo.map", MAP)
    files = {"build/foo.map": digest, "stage/usr/foo.map": digest, "gen.py": "b" * 64, "../pkg.tar": "c" * 64}
    reference = Manifest({p: Entry("file", d, size=1) for p, d in files.items()})
    divergent = Manifest({p: Entry("file", "e" * 64 if p != "gen.py" else d, size=1) for p, d in files.items()})
    (tmp_path / "pkg.tar").write_bytes(_tar({"usr/foo.map": MAP}))
    return reference, divergent


def test_the_packed_member_and_the_copy_lead_to_the_generator(tmp_path):
    t = trace(PACKAGE)
    reference, divergent = _manifests(tmp_path)
    fetch = lambda path, dest: shutil.copyfile(tmp_path / "pkg.tar", dest) and True  # noqa: E731
    made = provenance(t, reference, divergent, ["../pkg.tar", "build/foo.map"], fetch)
    assert made.made_from == {"../pkg.tar": (("usr/foo.map", "stage/usr/foo.map"),)}
    assert "member usr/foo.map has the bytes of stage/usr/foo.map" in made.line("../pkg.tar")
    (step,) = t.steps
    outputs = ("../pkg.tar", "stage/usr/foo.map", "build/foo.map")
    writer = writer_of(t, step, outputs, {"../pkg.tar": made.sources("../pkg.tar")}, made.copied)
    assert writer.command.startswith("python3 gen.py") and writer.wrote == ("build/foo.map",)
    # without the members and the copy, the packer and the copier make the whole step the writer
    assert writer_of(t, step, outputs).is_step


def test_a_member_whose_file_did_not_differ_leads_nowhere(tmp_path):
    t = trace(PACKAGE)
    reference, _ = _manifests(tmp_path)
    fetch = lambda path, dest: shutil.copyfile(tmp_path / "pkg.tar", dest) and True  # noqa: E731
    assert provenance(t, reference, reference, ["../pkg.tar"], fetch).made_from == {}
