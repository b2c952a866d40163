"""Benches rot unless something runs them: every bench in bench/ must at least start (its
imports are the project's API, which moves), and bench_trace runs its smallest mode."""

import subprocess
import sys

import pytest

from conftest import ROOT


BENCHES = sorted((ROOT / "bench").glob("*.py"))


@pytest.mark.parametrize("bench", BENCHES, ids=lambda path: path.name)
def test_every_bench_starts(bench):
    done = subprocess.run([sys.executable, str(bench), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
