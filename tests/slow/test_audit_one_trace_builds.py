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
