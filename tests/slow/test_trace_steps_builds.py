"""Process tree, file accesses and steps: synthetic traces, then a real traced make build."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fuzzer.tools import strace
from fuzzer.trace.steps import load_trace


# --- a real traced build --------------------------------------------------------------

MAKEFILE = """\
all: prog.txt copy.txt sub
gen.h: gen.py
\t{py} gen.py > gen.h
a.o: a.c gen.h
\tcat a.c gen.h > a.o
b.o: b.c
\tcp b.c b.o
prog.txt: a.o b.o
\tcat a.o b.o > prog.txt
copy.txt:
\tcd sub && cat s.in > ../copy.txt
sub:
\t$(MAKE) -C sub
.PHONY: sub
"""


SUB_MAKEFILE = "s.out: s.in\n\ttr a-z A-Z < s.in > s.out.tmp && mv s.out.tmp s.out\n"


def traced_make(workspace, jobs: int = 2, *targets: str):
    path = str(workspace / "trace.txt")
    proc = subprocess.run(
        strace.wrap(["make", f"-j{jobs}", *targets], path), cwd=workspace, capture_output=True, timeout=120, check=False
    )
    return proc, load_trace(path, str(workspace))


@pytest.mark.needs("strace")
def test_real_make_build(tmp_path):
    py = sys.executable
    (tmp_path / "Makefile").write_text(MAKEFILE.format(py=py))
    (tmp_path / "gen.py").write_text("print('#define X 1')\n")
    (tmp_path / "a.c").write_text("a\n")
    (tmp_path / "b.c").write_text("b\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Makefile").write_text(SUB_MAKEFILE)
    (tmp_path / "sub" / "s.in").write_text("hello\n")
    proc, t = traced_make(tmp_path)
    assert proc.returncode == 0, proc.stderr
    steps = {s.command: s for s in t.steps}
    sub_cmd = "tr a-z A-Z < s.in > s.out.tmp && mv s.out.tmp s.out"
    assert steps.keys() == {
        f"{py} gen.py > gen.h",
        "cat a.c gen.h > a.o",
        "cp b.c b.o",
        "cat a.o b.o > prog.txt",
        "cd sub && cat s.in > ../copy.txt",
        sub_cmd,
    }
    gen, a_o, prog = steps[f"{py} gen.py > gen.h"], steps["cat a.c gen.h > a.o"], steps["cat a.o b.o > prog.txt"]
    assert gen.leaf["gen.h"] == (py, "gen.py") and "gen.py" in gen.inputs
    assert {"a.c", "gen.h"} <= a_o.reads.keys() and a_o.outputs == {"a.o"}
    assert a_o.start >= gen.end and prog.start >= a_o.end  # make ordered them
    assert steps["cp b.c b.o"].leaf == {"b.o": ("cp", "b.c", "b.o")}
    assert steps[sub_cmd].cwd == "sub"
    assert steps[sub_cmd].outputs == {"sub/s.out"} and steps[sub_cmd].leaf["sub/s.out"] == ("tr", "a-z", "A-Z")
    assert "sub/s.in" in steps["cd sub && cat s.in > ../copy.txt"].reads
    assert all(s.exit_code == 0 and s.outer is None for s in t.steps)
    assert t.writers("prog.txt") == (prog,)
    assert os.path.samefile(t.workspace, tmp_path)


@pytest.mark.needs("strace")
def test_real_failures_are_recorded(tmp_path):
    (tmp_path / "Makefile").write_text("all: a b\na:\n\texit 3\nb:\n\tkill -9 $$$$\n")
    proc, t = traced_make(tmp_path, 2, "-k")
    assert proc.returncode != 0
    steps = {s.command: s for s in t.steps}
    assert steps["exit 3"].exit_code == 3
    assert steps["kill -9 $$"].signal == "SIGKILL" and steps["kill -9 $$"].failed


@pytest.mark.needs("strace")
def test_real_copies_and_pipes_are_traced(tmp_path):
    script = (f"{sys.executable} -c 'import shutil; shutil.copy(\"a\", \"b\")'; cp a c; "
              "printf 'x\\n' | sort > d")
    (tmp_path / "a").write_text("hello\n")
    trace_path = tmp_path / "trace.txt"
    subprocess.run(strace.wrap(["/bin/sh", "-c", script], str(trace_path)), cwd=tmp_path, check=True)
    t = load_trace(trace_path, str(tmp_path))
    origins = {a.path: a.origin for p in t.processes for a in p.accesses if a.kind == "write" and a.origin}
    assert origins == {"b": "a", "c": "a"}
    sort = next(p for p in t.processes if p.execs and os.path.basename(p.execs[0][0]) == "sort")
    assert sort.stdin_pipe
