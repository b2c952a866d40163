"""Writer processes in the contracts: the report's `writer_process` (JSON round trip and
schema), the scenario format's `writer` expectation and `localize_budget`, and the bench
that measures what writer-process replays save (its smoke mode)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


def test_the_writers_bench_runs_in_its_smoke_mode():
    bench = ROOT / "bench" / "bench_writers.py"
    if not bench.exists():
        pytest.skip("the benches are not in this tree (an sdist)")
    proc = subprocess.run([sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.strip().startswith(("step ", "writer "))]
    assert [r[0] for r in rows] == ["step", "writer"] and rows[1][-2] == "writer", proc.stdout
