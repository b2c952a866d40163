"""With the step audit on, a reproducible campaign traces its reference once: the hazard
scan reads the audit's traced reference build, the same build, instead of tracing it again
(on GNU hello about 2 minutes a campaign)."""

from __future__ import annotations

import json

from conftest import buildfuzz, make_project

# two steps not ordered with each other racing for one file: the hazard scan must still see it
RACING = """
    all: a.txt b.txt
    a.txt:
        echo a > $@ && echo a >> shared.log
    b.txt:
        echo b > $@ && echo b >> shared.log
    """


def audited(tmp_path, makefile: str, exit_code: int, *options: str, command: str = "make"):
    """A campaign with every step audited: its store and its report."""
    src = make_project(tmp_path / "src", makefile)
    store, out = tmp_path / "s", tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--check-steps", "all", *options,
                  "--report-json", out, "--", command)
    assert r.returncode == exit_code, r.stderr
    return store, json.loads(out.read_text())


def test_the_hazard_scan_reads_the_audits_traced_reference(tmp_path):
    store, report = audited(tmp_path, RACING, 0, "--runs", "2", "--artifact", "*.txt")
    logs = store / "campaign-1" / "logs"
    assert [p.name for p in logs.glob("trace-reference-*.log")] == ["trace-reference-0000.log"]
    assert len(list(logs.glob("hazard-scan-*.log"))) == 1
    assert report["audit"]["audited"] == 2
    assert any("shared.log" in (h.get("files") or [h["file"]]) for h in report["hazards"]), report["hazards"]


# the audit replays cpus.txt at the traced build's CPUs: stable, so not its root; the
# builds differ in it, so localization replays it, in the audit's traced tree
CPU_COUNT = """
    all: cpus.txt stable.txt
    cpus.txt:
        echo cpus=$$(nproc) > $@
    stable.txt:
        echo stable > $@
    """


def test_localization_replays_roots_in_the_audits_traced_tree(tmp_path):
    store, report = audited(tmp_path, CPU_COUNT, 1, "--runs", "4", "--seed", "1", command="make -j{jobs}")
    campaign = store / "campaign-1"
    assert [p.name for p in (campaign / "logs").glob("trace-reference-*.log")] == ["trace-reference-0000.log"]
    (culprit,) = report["culprits"]
    assert (culprit["command"], culprit["kind"]) == ("echo cpus=$(nproc) > cpus.txt", "parallelism-level")
    assert not (campaign / "audit-reference").exists()
    assert not any((store / "workspace").iterdir())


# the hash seed varies in every run: the audit finds order.txt's step varying alone, and
# every file the runs differ in leads back to it in the audit's trace
HASH_ORDER = """
    all: order.txt copy.txt
    order.txt:
        python3 -c "print(sorted({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}, key=hash))" > $@
    copy.txt: order.txt
        cp order.txt $@
    """


def test_roots_the_audit_found_explain_the_builds_without_a_traced_divergent_build(tmp_path):
    store, report = audited(tmp_path, HASH_ORDER, 1, "--runs", "3", "--seed", "1")
    logs = store / "campaign-1" / "logs"
    assert sorted(p.name for p in logs.glob("trace*.log")) == ["trace-reference-0000.log"]
    (culprit,) = report["culprits"]
    assert culprit["command"].startswith("python3 -c") and culprit["kind"] == "intrinsic"
    assert "PYTHONHASHSEED" in culprit["stabilized_by"], culprit
    assert "through the step audit's traced reference" in culprit["evidence"]
    assert any(n.startswith("localization traced no divergent build: each of the") for n in report["notes"])


# the audit explains order.txt, not cpus.txt (stable at the traced build's CPUs)
HASH_ORDER_AND_CPU_COUNT = """
    all: order.txt cpus.txt
    order.txt:
        python3 -c "print(sorted({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}, key=hash))" > $@
    cpus.txt:
        echo cpus=$$(nproc) > $@
    """


def test_a_difference_the_audit_did_not_explain_sends_localization_to_trace_a_divergent_build(tmp_path):
    store, report = audited(tmp_path, HASH_ORDER_AND_CPU_COUNT, 1, "--runs", "4", "--seed", "1",
                            command="make -j{jobs}")
    assert list((store / "campaign-1" / "logs").glob("trace-0*.log")), "no divergent build was traced"
    assert {a["path"] for a in report["divergent_artifacts"]} == {"order.txt", "cpus.txt"}
    kinds = {c["command"].split()[0]: c["kind"] for c in report["culprits"]}
    assert kinds.get("python3") == "intrinsic", report["culprits"]
    assert not any(n.startswith("localization traced no divergent build") for n in report["notes"])
    # cpus.txt follows the CPU count: named as a culprit's output when the traced rerun differed in it, else said
    if not any("cpus.txt" in c["outputs"] for c in report["culprits"]):
        assert any("not enough evidence" in n and n.endswith(": cpus.txt") for n in report["notes"]), report["notes"]


# both steps vary alone; walking back from what differs stops at the first, since the
# second reads it (by hand: order.txt and both.txt differ in 3 of 3 runs)
CHAINED_HASH_ORDERS = """
    all: both.txt
    order.txt:
        python3 -c "print(sorted({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}, key=hash))" > $@
    both.txt: order.txt
        python3 -c "print(open('order.txt').read(), sorted({'eta', 'theta', 'iota', 'kappa'}, key=hash))" > $@
    """


def test_the_note_counts_the_roots_it_reached_among_the_steps_the_audit_found_varying(tmp_path):
    _, report = audited(tmp_path, CHAINED_HASH_ORDERS, 1, "--runs", "3", "--seed", "1")
    assert len(report["culprits"]) == 2 and report["audit"]["roots"] == 2
    (note,) = [n for n in report["notes"] if n.startswith("localization traced no divergent build")]
    assert "to one of 1 step(s) it found varying alone (of the 2 it found)" in note, note


# tag.py writes "calm" under strace and at make -j1, a random tag in a parallel make's
# build; `alone`: in a replay (its parent is not make) too. So the traced builds never differ
# in its files, the audit's replays see an `alone` file vary, the parallel builds differ in both
TAG = """import os, random, sys
mode, out = sys.argv[1:]
traced = any(line.split()[1] != "0" for line in open("/proc/self/status") if line.startswith("TracerPid:"))
under_make = open("/proc/%d/comm" % os.getppid()).read().strip() == "make"
parallel = under_make and "jobserver" in os.environ.get("MAKEFLAGS", "")
varies = not traced and (parallel or (mode == "alone" and not under_make))
open(out, "w").write("%08x\\n" % random.getrandbits(32) if varies else "calm\\n")
"""
# jobs.txt follows the job count, which the audit (at -j1) cannot see: localization traces
# a divergent build, which differs in jobs.txt and not in tag.txt
TAG_AND_JOBS = """
    all: tag.txt jobs.txt
    tag.txt:
        python3 tag.py alone $@
    jobs.txt:
        echo $(filter -j%,$(MAKEFLAGS)) > $@
    """
# no traced build differs in anything: localization reads no divergent trace
TAG_AND_BUILDS_TAG = """
    all: tag.txt builds.txt
    tag.txt:
        python3 tag.py alone $@
    builds.txt:
        python3 tag.py builds $@
    """


def tagged(tmp_path, makefile: str) -> dict:
    src = make_project(tmp_path / "src", makefile, {"tag.py": TAG})
    out = tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--check-steps", "all", "--runs", "4",
                  "--seed", "1", "--report-json", out, "--", "make -j{jobs}")
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text())
    assert list((tmp_path / "s" / "campaign-1" / "logs").glob("trace-0*.log")), "no divergent build was traced"
    audited = {s["command"]: s["result"] for s in report["audit"]["steps"]}
    assert audited["python3 tag.py alone tag.txt"] == "varies", audited
    (tag,) = [c for c in report["culprits"] if "tag.txt" in c["outputs"]]
    assert tag["command"] == "python3 tag.py alone tag.txt" and tag["kind"] == "intrinsic", tag
    return report


def test_a_file_the_audit_saw_vary_names_its_step_though_the_traced_rerun_did_not_differ_in_it(tmp_path):
    report = tagged(tmp_path, TAG_AND_JOBS)
    assert any("jobs.txt" in c["outputs"] for c in report["culprits"]), report["culprits"]
    assert not any("not enough evidence" in n and "tag.txt" in n for n in report["notes"]), report["notes"]


def test_a_file_the_audit_saw_vary_names_its_step_though_no_traced_rerun_diverged(tmp_path):
    report = tagged(tmp_path, TAG_AND_BUILDS_TAG)
    assert not any("builds.txt" in c["outputs"] for c in report["culprits"]), report["culprits"]
    (note,) = [n for n in report["notes"] if "did not reappear" in n]
    assert note.endswith(": builds.txt"), note
