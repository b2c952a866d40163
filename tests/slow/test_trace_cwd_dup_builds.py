"""A real traced make build whose processes change directory before they exec (Python's
`cwd=`, `cd d && exec`) and hand files on by dup (`tar czf`, `tar | gzip > x`): each is
shown where its program ran, and an archive's writer is the step that made its bytes."""

from __future__ import annotations

import sys

import pytest

from test_trace_steps_builds import traced_make

from fuzzer.trace.writers import writer_of

MAKEFILE = """\
all: private/out.txt sub/copy.txt czf.tar.gz piped.tar.gz
private/out.txt: configure.py
\t{py} configure.py
sub/copy.txt:
\tsh -c 'cd sub && exec cp in.txt copy.txt'
czf.tar.gz:
\ttar czf czf.tar.gz dir
piped.tar.gz:
\ttar cf - dir | gzip > piped.tar.gz
"""

CONFIGURE = """\
import os, subprocess
os.makedirs("private", exist_ok=True)
subprocess.run(["sh", "-c", "echo checked > out.txt"], cwd="private", check=True)
"""


@pytest.mark.needs("strace")
def test_real_chdir_before_exec_and_dups(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE.format(py=sys.executable))
    (tmp_path / "configure.py").write_text(CONFIGURE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "in.txt").write_text("in\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.txt").write_text("a\n")
    proc, t = traced_make(tmp_path, 1)
    assert proc.returncode == 0, proc.stderr
    first = {p.execs[0]: p for p in t.processes if p.execs}

    check = first[("sh", "-c", "echo checked > out.txt")]
    assert check.cwd == "private" and "private/out.txt" in {a.path for a in check.accesses if a.kind == "write"}
    cd_exec = first[("sh", "-c", "cd sub && exec cp in.txt copy.txt")]
    assert cd_exec.cwd == "." and cd_exec.argv[0] == "cp"  # shown as the shell, where the shell ran

    steps = {s.command: s for s in t.steps}
    czf = steps["tar czf czf.tar.gz dir"]
    fork = next(p for p in t.processes if p.parent == czf.members[0])
    assert fork.stdin_pipe and ("stdout", "czf.tar.gz") in {(a.kind, a.path) for a in fork.accesses}
    assert writer_of(t, czf, ("czf.tar.gz",)).is_step

    piped = steps["tar cf - dir | gzip > piped.tar.gz"]
    gzip = next(t.processes[i] for i in piped.members if t.processes[i].execs == (("gzip",),))
    assert gzip.stdin_pipe and ("stdout", "piped.tar.gz") in {(a.kind, a.path) for a in gzip.accesses}
    assert writer_of(t, piped, ("piped.tar.gz",)).is_step
