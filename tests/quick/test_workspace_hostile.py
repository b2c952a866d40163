"""Hostile source trees: special files are never read, names never reach a terminal raw.

A character device copied as a file fills the disk (a /dev/zero twin made 10.7 GB in
10 s), a FIFO blocks whoever opens it, a socket cannot be opened at all; and a file name
with a newline forges report lines, one with an OSC sequence drives the terminal.
"""

import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec import structs

from fuzzer.escaping import safe_line, safe_lines, safe_name
from fuzzer.execute.workspace import Workspace
from fuzzer.observe import take_manifest
from fuzzer.report.text import render

from conftest import ROOT
from report_samples import hostile_everywhere, unreproducible


# a newline that would forge a line, and an OSC 0 sequence that would retitle the terminal
EVIL_NAME = "evil\nverdict: REPRODUCIBLE\x1b]0;owned\x07.txt"


FILE_LIMIT = 1 << 20  # a copy of /dev/zero dies at this size instead of filling the disk


def can_mknod() -> bool:
    probe = Path(f"/tmp/buildfuzz-mknod-probe-{os.getpid()}")
    try:
        os.mknod(probe, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    except OSError:
        return False
    probe.unlink()
    return True


def make_hostile_tree(root: Path, device: bool) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("plain\n")
    (root / EVIL_NAME).write_text("evil\n")
    os.mkfifo(root / "sub" / "pipe", 0o640)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(root / "sock"))  # the socket file stays after the close
    if device:
        os.mknod(root / "zero", 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # a /dev/zero twin
    return root


@pytest.fixture(params=["with a char device", "without"])
def hostile_tree(request, tmp_path):
    device = request.param == "with a char device"
    if device and not can_mknod():
        pytest.skip("mknod of a character device is not permitted here")
    return make_hostile_tree(tmp_path / "src", device), device


def prepare_in_a_sandbox(source: Path, target: Path) -> list:
    """Workspace.prepare() in a child with a file size limit and a timeout: were a device
    read as a file, the test fails at once instead of filling the disk or hanging."""
    script = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from fuzzer.execute.workspace import Workspace
        resource.setrlimit(resource.RLIMIT_FSIZE, ({FILE_LIMIT}, {FILE_LIMIT}))
        workspace = Workspace(Path({str(source)!r}), Path({str(target)!r}))
        workspace.prepare()
        print(sorted(workspace.not_copied))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout)


def test_the_copy_recreates_fifos_and_skips_devices_and_sockets(hostile_tree, tmp_path):
    source, device = hostile_tree
    target = tmp_path / "ws"
    not_copied = prepare_in_a_sandbox(source, target)
    assert not_copied == [("sock", "socket")] + ([("zero", "char-device")] if device else [])
    assert stat.S_ISFIFO(os.lstat(target / "sub" / "pipe").st_mode)
    assert stat.S_IMODE(os.lstat(target / "sub" / "pipe").st_mode) == 0o640
    assert sorted(os.listdir(target)) == sorted([EVIL_NAME, "a.txt", "sub"])
    assert (target / EVIL_NAME).read_text() == "evil\n"
    Workspace(source, target).remove()
    assert not target.exists()


def test_the_manifest_records_special_files_by_type_without_reading_them(hostile_tree):
    source, device = hostile_tree
    entries = take_manifest(source).entries
    kinds = {path: (entry.kind, entry.digest) for path, entry in entries.items() if entry.kind != "file"}
    expected = {"sub/pipe": ("fifo", "fifo"), "sock": ("socket", "socket")}
    if device:
        expected["zero"] = ("char-device", "char-device 1:5")
    assert kinds == expected
    assert entries[EVIL_NAME].kind == "file"


@given(st.text())
def test_safe_names_are_one_printable_line(text):
    for safe in (safe_name(text), safe_line(text)):
        assert all(c.isprintable() or c == "\t" for c in safe)
        safe.encode("utf-8")  # lone surrogates (undecodable bytes of a name) are escaped too
    assert "\t" not in safe_name(text)
    assert safe_lines(text).split("\n") == [safe_line(line) for line in text.split("\n")]


def test_safe_names_show_what_was_there():
    assert safe_name(EVIL_NAME) == "evil\\nverdict: REPRODUCIBLE\\x1b]0;owned\\x07.txt"
    assert safe_name(os.fsdecode(b"caf\xe9\x9b.o")) == "caf\\xe9\\x9b.o"  # latin-1 bytes, not UTF-8
    assert safe_name("right\u202etxt.exe") == "right\\u202etxt.exe"  # a bidi override reorders text
    assert safe_line("\tcc -c ops.c") == "\tcc -c ops.c"
    assert safe_name("naïve/ok-name_1.c") == "naïve/ok-name_1.c"


def test_the_text_report_prints_no_control_character_and_forges_no_line():
    assert raw_controls(render(hostile_everywhere(unreproducible()))) == []
    report = unreproducible()
    evil = [structs.replace(a, path=EVIL_NAME) for a in report.divergent_artifacts]
    lines = render(structs.replace(report, divergent_artifacts=evil)).splitlines()
    assert [line for line in lines if line.startswith("verdict:")] == [lines[0], lines[-1]]  # opens, and closes
    assert len(lines) == len(render(report).splitlines())


def raw_controls(text: str) -> list[str]:
    return sorted({c for c in text if not (c.isprintable() or c in "\n\t")})


def test_what_a_build_leaves_beside_its_tree_is_never_read_or_followed_and_always_emptied(tmp_path):
    """A FIFO, a read-only directory and links out of the parent, left by a build in the
    tree's parent: recorded without opening or following, then removed by the next run."""
    source, outside = tmp_path / "src", tmp_path / "outside"
    source.mkdir()
    outside.mkdir()
    (outside / "precious.txt").write_text("not the build's\n")
    workspace = Workspace(source, tmp_path / "store" / "workspace" / "src", parent_outputs=True)
    parent = workspace.prepare().parent
    os.mkfifo(parent / "pipe")
    (parent / "locked" / "deep").mkdir(parents=True)
    (parent / "locked" / "deep" / "x.deb").write_text("deb\n")
    os.chmod(parent / "locked" / "deep", 0o500)
    os.chmod(parent / "locked", 0o500)
    os.symlink(outside, parent / "dir-link")
    os.symlink(outside / "precious.txt", parent / "file-link")
    entries = workspace.outside_manifest().entries
    assert entries["../pipe"].kind == "fifo" and entries["../dir-link"].kind == "symlink"
    assert "../locked/deep/x.deb" in entries and not any(p.startswith("../dir-link/") for p in entries)
    workspace.prepare()
    assert os.listdir(parent) == ["src"]
    assert (outside / "precious.txt").read_text() == "not the build's\n"
