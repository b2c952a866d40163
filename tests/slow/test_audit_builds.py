"""The step audit (`--check-steps`) on real traced builds, and its bad input."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, buildfuzz, make_project
from test_audit import FILES, GENERATED


def test_every_step_audited_and_the_varying_one_rotates(tmp_path):
    src = make_project(tmp_path / "src", GENERATED, FILES)
    store, out = tmp_path / "s", tmp_path / "r.json"
    # --no-localize: the culprit below is the audit's own (localization would take it over)
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "2", "--check-steps", "all", "--no-localize",
                  "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text())
    audit = report["audit"]
    results = {s["command"]: s["result"] for s in audit["steps"]}
    assert results == {"mkdir -p out && python3 gen_seeded.py > out/seeded.txt": "varies",
                       "mkdir -p out && python3 gen_plain.py > out/plain.txt": "stable",
                       "cat out/seeded.txt out/plain.txt > out/app.txt": "stable"}
    assert (audit["audited"], audit["roots"], audit["left"]) == (3, 1, 0)
    seeded = next(c for c in report["culprits"] if "gen_seeded" in c["command"])
    assert seeded["kind"] == "intrinsic" and seeded["stabilized_by"] == ["PYTHONHASHSEED"]
    first = {s["identity"]: s["audited"] for s in audit["steps"]}

    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "2", "--check-steps", "50%", "--no-localize",
                  "--report-json", out, "--", "make")
    again = json.loads(out.read_text())["audit"]
    audited = [s for s in again["steps"] if s["result"] != "left"]
    oldest = sorted(first, key=first.get)[:2]
    assert [s["identity"] for s in audited] == oldest, "the least recently audited go first"
    assert all(s["last_audit"] == first[s["identity"]] for s in audited)
    assert again["left"] == 1 and "later campaigns" in again["why_left"]


def test_the_audit_bench_runs_in_its_smoke_mode():
    import subprocess
    import sys
    
    bench = ROOT / "bench" / "bench_audit.py"
    if not bench.exists():
        pytest.skip("the benches are not in this tree (an sdist)")
    proc = subprocess.run([sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert any(line.strip().startswith("audit, 1 at once") for line in lines), proc.stdout
    assert any(line.strip().startswith("bare,  1 at once") for line in lines), proc.stdout
    assert any(line.startswith("(c) analysis: 100 steps") for line in lines), proc.stdout
    assert any(line.startswith("(b) store growth:") for line in lines), proc.stdout
