"""Hostile source trees: special files are never read, names never reach a terminal raw.

A character device copied as a file fills the disk (a /dev/zero twin made 10.7 GB in
10 s), a FIFO blocks whoever opens it, a socket cannot be opened at all; and a file name
with a newline forges report lines, one with an OSC sequence drives the terminal.
"""

import sys

from conftest import buildfuzz
from test_workspace_hostile import EVIL_NAME, can_mknod, make_hostile_tree, raw_controls


def test_a_campaign_on_a_hostile_tree_ends_and_prints_only_safe_names(tmp_path):
    device = can_mknod()
    source = make_hostile_tree(tmp_path / "src\x1b[31m", device)
    # the evil-named file differs in every build, so the report names it; the build also
    # leaves a FIFO and a socket of its own, which the manifest must not try to read
    build = ("import os, socket, time; open(" + repr(EVIL_NAME) + ", 'w').write(str(time.time_ns()));"
             " os.mkfifo('made.fifo'); socket.socket(socket.AF_UNIX).bind('made.sock')")
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", 2, "--no-localize",
                       "--", sys.executable, "-c", build, timeout=120)
    assert result.returncode == 1, result.stderr
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []
    assert "evil\\nverdict: REPRODUCIBLE\\x1b]0;owned\\x07.txt" in result.stdout
    assert not any(line.startswith("verdict: REPRODUCIBLE") for line in result.stdout.splitlines())
    assert "src\\x1b[31m" in result.stderr  # the progress line names the workspace
    logs = list((tmp_path / "store").rglob("run-0000.log"))
    assert len(logs) == 1
    skipped = "sock (socket)" + (", zero (char-device)" if device else "")
    assert f"special files of the source not copied into the workspace: {skipped}" in logs[0].read_text()


def test_a_failed_reference_quoting_a_hostile_name_prints_it_escaped(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    build = f"import sys; sys.exit('cannot open ' + {EVIL_NAME!r})"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", 2, "--no-localize",
                       "--", sys.executable, "-c", build, timeout=120)
    assert result.returncode == 3, result.stderr
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []
    # the name's newline became a line break of the build's own output, quoted as such;
    # its escape sequence must not reach the terminal
    assert "REPRODUCIBLE\\x1b]0;owned\\x07.txt" in result.stderr
