"""The trace scale benches run (their numbers are in bench/, never asserted here)."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT


def test_bench_trace_smoke_analyses_a_traced_and_a_synthetic_build():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_trace.py"), "--smoke"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    table = [line.split() for line in done.stdout.splitlines() if re.match(r"\s*\d+\s+(traced|synthetic)\s", line)]
    rows = {row[1]: row for row in table}
    # N source steps procs ... hazards (no verdict: no target at these sizes). The copies are
    # distinct steps of one chain each, so no step races another.
    assert rows["traced"][2] == "100" and rows["synthetic"][2] == "300"
    assert rows["traced"][-1] == rows["synthetic"][-1] == "0"
    assert "traced/untraced wall" in done.stdout


def test_bench_scale_smoke_localizes_both_trees():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_scale.py"), "--smoke"], capture_output=True,
                          text=True, timeout=600, cwd=ROOT / "bench")
    assert done.returncode == 0, done.stderr
    assert re.search(r"200 files\s+unreproducible", done.stdout)
    assert re.search(r"4 MiB artifact\s+unreproducible", done.stdout)
    assert "intrinsic: date" in done.stdout
