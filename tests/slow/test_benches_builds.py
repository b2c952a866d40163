"""Benches rot unless something runs them: every bench in bench/ must at least start (its
imports are the project's API, which moves), and bench_trace runs its smallest mode."""

import subprocess
import sys

from conftest import ROOT


def test_bench_trace_runs_its_smallest_mode():
    bench = ROOT / "bench" / "bench_trace.py"
    done = subprocess.run([sys.executable, str(bench), "--quick", "--sizes", "100"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "traced/untraced wall" in done.stdout
