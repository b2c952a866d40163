"""The step audit on a real traced build, on what decides whether a step is replayed alone:
a later step that opens a file for writing only to lock it (dpkg-genbuildinfo on
debian/control) leaves its readers replayable; a step whose shell read a file a later step
really rewrote is audited through the process inside it that wrote its output."""

from __future__ import annotations

import json

import pytest

from conftest import buildfuzz, make_project

MAKEFILE = """
    all: out.txt locked gen.txt bumped
    out.txt: control
        cat control > out.txt
    locked: out.txt
        python3 -c "import os; os.close(os.open('control', os.O_WRONLY))" && echo locked > $@
    gen.txt: rules.sh gen.py
        sh rules.sh
    bumped: gen.txt
        echo 2 > version.txt && echo bumped > $@
    """
GEN = "import sys\nwith open(sys.argv[1], 'w') as f:\n    f.write('generated\\n')\n"  # its own output, as autom4te
RULES = "read v < version.txt\necho \"version $v\" > /dev/null\npython3 gen.py gen.txt\n"


@pytest.mark.needs("strace")
def test_a_locked_input_and_a_step_with_a_replayable_writer_inside_are_audited(tmp_path):
    src = make_project(tmp_path / "src", MAKEFILE, {"control": "Source: x\n", "rules.sh": RULES,
                                                    "gen.py": GEN, "version.txt": "1\n"})
    out = tmp_path / "report.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--jobs", "1",
                  "--check-steps", "all", "--no-localize", "--report-json", out, "--", "make")
    assert r.returncode == 0, r.stderr
    audit = json.loads(out.read_text())["audit"]
    steps = {s["command"]: s for s in audit["steps"]}
    cat = steps["cat control > out.txt"]
    assert (cat["result"], cat["replays"]) == ("stable", 5), cat["detail"]  # not "control, which … rewrote"
    rules = steps["sh rules.sh"]
    assert (rules["result"], rules["replays"]) == ("stable", 5), rules["detail"]
    assert rules["replay"].endswith("python3 gen.py gen.txt")  # the writer inside, not the whole script


PROBING = """
    all: stamp
    config.txt:
        if [ -e run.log ]; then echo rerun > $@; else echo fresh > $@; fi
    stamp: config.txt
        echo built >> run.log && cp config.txt $@
    """


@pytest.mark.needs("strace")
def test_a_step_that_looked_for_a_file_a_later_step_made_is_replayed_without_it(tmp_path):
    # cmake's configure looks for the .ninja_log ninja writes later: replayed in the finished
    # tree, it would see the file and say `rerun`, a variation no build has
    src = make_project(tmp_path / "src", PROBING, {})
    out = tmp_path / "report.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--jobs", "1",
                  "--check-steps", "all", "--no-localize", "--report-json", out, "--", "make")
    assert r.returncode == 0, r.stderr
    steps = {s["command"].split(";")[0]: s for s in json.loads(out.read_text())["audit"]["steps"]}
    probe = steps["if [ -e run.log ]"]
    assert (probe["result"], probe["replays"]) == ("stable", 5), probe["detail"]


# automake's archive rule: ar looks for the archive it creates, a later line's ranlib rewrites it
ARCHIVE = """
    all: libk.a
    k.o: k.c
        gcc -c k.c -o k.o
    libk.a: k.o
        rm -f libk.a
        ar cru libk.a k.o
        ranlib libk.a
    """


@pytest.mark.needs("strace")
def test_a_step_that_looked_for_the_file_it_then_made_is_audited(tmp_path):
    src = make_project(tmp_path / "src", ARCHIVE, {"k.c": "int k(void) { return 1; }\n"})
    out = tmp_path / "report.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--jobs", "1",
                  "--check-steps", "all", "--no-localize", "--report-json", out, "--", "make")
    assert r.returncode == 0, r.stderr
    steps = {s["command"]: s for s in json.loads(out.read_text())["audit"]["steps"]}
    ar = steps["ar cru libk.a k.o"]
    assert (ar["result"], ar["replays"]) == ("stable", 5), ar["detail"]  # not "looked for libk.a before ranlib…"
