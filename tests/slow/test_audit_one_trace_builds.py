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


def test_the_hazard_scan_reads_the_audits_traced_reference(tmp_path):
    src = make_project(tmp_path / "src", RACING)
    store, out = tmp_path / "s", tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "2", "--check-steps", "all",
                  "--artifact", "*.txt", "--report-json", out, "--", "make")
    assert r.returncode == 0, r.stderr
    logs = store / "campaign-1" / "logs"
    assert [p.name for p in logs.glob("trace-reference-*.log")] == ["trace-reference-0000.log"]
    assert len(list(logs.glob("hazard-scan-*.log"))) == 1
    report = json.loads(out.read_text())
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
    src = make_project(tmp_path / "src", CPU_COUNT)
    store, out = tmp_path / "s", tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "4", "--seed", "1", "--check-steps", "all",
                  "--report-json", out, "--", "make -j{jobs}")
    assert r.returncode == 1, r.stderr
    campaign = store / "campaign-1"
    assert [p.name for p in (campaign / "logs").glob("trace-reference-*.log")] == ["trace-reference-0000.log"]
    (culprit,) = json.loads(out.read_text())["culprits"]
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
    src = make_project(tmp_path / "src", HASH_ORDER)
    store, out = tmp_path / "s", tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "3", "--seed", "1", "--check-steps", "all",
                  "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    logs = store / "campaign-1" / "logs"
    assert sorted(p.name for p in logs.glob("trace*.log")) == ["trace-reference-0000.log"]
    report = json.loads(out.read_text())
    (culprit,) = report["culprits"]
    assert culprit["command"].startswith("python3 -c") and culprit["kind"] == "intrinsic"
    assert "PYTHONHASHSEED" in culprit["stabilized_by"], culprit
    assert "through the step audit's traced reference" in culprit["evidence"]
    assert any(n.startswith("localization traced no divergent build: every file run 0 and") for n in report["notes"])


# the audit explains order.txt, not cpus.txt (stable at the traced build's CPUs)
HASH_ORDER_AND_CPU_COUNT = """
    all: order.txt cpus.txt
    order.txt:
        python3 -c "print(sorted({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}, key=hash))" > $@
    cpus.txt:
        echo cpus=$$(nproc) > $@
    """


def test_a_difference_the_audit_did_not_explain_sends_localization_to_trace_a_divergent_build(tmp_path):
    src = make_project(tmp_path / "src", HASH_ORDER_AND_CPU_COUNT)
    store, out = tmp_path / "s", tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "4", "--seed", "1", "--check-steps", "all",
                  "--report-json", out, "--", "make -j{jobs}")
    assert r.returncode == 1, r.stderr
    assert list((store / "campaign-1" / "logs").glob("trace-0*.log")), "no divergent build was traced"
    report = json.loads(out.read_text())
    assert {a["path"] for a in report["divergent_artifacts"]} == {"order.txt", "cpus.txt"}
    kinds = {c["command"].split()[0]: c["kind"] for c in report["culprits"]}
    assert kinds.get("python3") == "intrinsic", report["culprits"]
    assert not any(n.startswith("localization traced no divergent build") for n in report["notes"])
