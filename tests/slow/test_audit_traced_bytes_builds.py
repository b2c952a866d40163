"""The step audit compares a step's replays with what the traced build wrote, not only with
each other, where those bytes are the step's own (kbuild's appended modules.order is not); a
failed replay checks nothing; files beside the tree are matched to steps.

Each build is the shape a real one showed (/work/audit-bugs.md H, D, B): a step whose output
follows its parent process (make in the build, buildfuzz's replay in a replay), one that
fails unless make runs it, and one that writes `../pkg.txt`, as dpkg-buildpackage writes `../*.deb`.
"""

from __future__ import annotations

import json
import shutil

from conftest import buildfuzz, make_project

# the recipe's shell's parent: make in the build, never make in a replay alone
PARENT = """
    all: parent.txt plain.txt
    parent.txt:
        cat /proc/$$PPID/comm > $@
    plain.txt:
        echo plain > $@
    """

ONLY_UNDER_MAKE = """
    all: checked.txt plain.txt
    checked.txt:
        test "$$(cat /proc/$$PPID/comm)" = make && echo ok > $@
    plain.txt:
        echo plain > $@
    """

# kbuild's modules.order: each object's rule appends its name to one list
APPENDED = """
    all: a.o b.o
    a.o:
        echo a > $@ && echo a.o >> modules.order
    b.o: a.o
        echo b > $@ && echo b.o >> modules.order
    """

BESIDE = """
    all:
        python3 gen.py > ../pkg.txt
    """
HASH_ORDER = 'print(",".join({"alpha", "beta", "gamma", "delta", "eps", "zeta"}))\n'


def audit_of(tmp_path, src, *options, env=None):
    out = tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--check-steps", "all",
                  "--no-localize", "--report-json", out, *options, "--", "make", env=env)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(out.read_text())
    return r, report, {s["command"]: s for s in report["audit"]["steps"]}


def test_replays_that_agree_on_other_bytes_than_the_traced_build_make_a_root(tmp_path):
    src = make_project(tmp_path / "src", PARENT)
    r, report, steps = audit_of(tmp_path, src)
    parent, plain = steps["cat /proc/$PPID/comm > parent.txt"], steps["echo plain > plain.txt"]
    assert parent["result"] == "varies", parent
    assert "alone and the traced build" in parent["detail"]  # every replay agreed: the build's bytes differ
    assert plain["result"] == "stable"
    assert "replays alone gave the traced build's bytes: any variation left is below" in plain["detail"]
    culprit = next(c for c in report["culprits"] if c["command"] == parent["command"])
    assert culprit["kind"] and "alone and the traced build" in culprit["evidence"] and parent["replay"]
    assert report["audit"]["roots"] == 1
    # the builds matched: the replays are the evidence
    assert report["verdict"] == "unreproducible" and r.returncode == 1


def test_a_step_appending_to_a_list_others_wrote_is_no_root(tmp_path):
    src = make_project(tmp_path / "src", APPENDED)
    r, report, steps = audit_of(tmp_path, src)
    last = steps["echo b > b.o && echo b.o >> modules.order"]
    # replayed on the final tree it appends to the whole list: not the traced build's bytes by design
    assert last["result"] == "stable", last
    assert "compared with each other only (another step also wrote modules.order" in last["detail"]
    assert report["audit"]["roots"] == 0 and report["verdict"] == "reproducible" and r.returncode == 0


def test_a_failed_replay_is_listed_not_counted_and_stays_first_for_the_next_campaign(tmp_path):
    src = make_project(tmp_path / "src", ONLY_UNDER_MAKE)
    r, report, steps = audit_of(tmp_path, src)
    checked, plain = steps["test \"$(cat /proc/$PPID/comm)\" = make && echo ok > checked.txt"], \
        steps["echo plain > plain.txt"]
    assert checked["result"] == "replay-failed" and "exited 1" in checked["detail"]
    assert checked["audited"] == "" and plain["audited"]
    assert (report["audit"]["reaching"], report["audit"]["audited"]) == (2, 1)
    assert "1 failed to replay" in r.stdout + r.stderr

    _, _, again = audit_of(tmp_path, src)  # the same store: the rotation remembers what was checked
    assert again[checked["command"]]["last_audit"] == "", "a failed replay is not an audit"
    assert again[plain["command"]]["last_audit"] == plain["audited"]


def test_a_file_beside_the_tree_is_matched_to_the_step_that_wrote_it(tmp_path):
    src = make_project(tmp_path / "src", BESIDE, {"gen.py": HASH_ORDER})
    tools = tmp_path / "bin"  # no unshare: replays run in the tree itself, where ../pkg.txt is the build's
    tools.mkdir()
    for tool in ("sh", "make", "python3", "strace", "env", "true"):
        (tools / tool).symlink_to(shutil.which(tool))
    _, report, steps = audit_of(tmp_path, src, "--artifact", "../*", env={"PATH": str(tools)})
    assert report["audit"]["reaching"] == 1, report["audit"]
    gen = steps["python3 gen.py > ../pkg.txt"]
    assert gen["outputs"] == ["../pkg.txt"]
    assert gen["result"] == "varies", gen
