"""Benches rot unless something runs them: every bench in bench/ must at least start (its
imports are the project's API, which moves), and bench_trace runs its smallest mode."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT


BENCHES = sorted((ROOT / "bench").glob("*.py"))


@pytest.fixture(scope="module")
def started():
    """Every bench's `--help`, in one interpreter of its own (tests/helpers/start_benches.py)."""
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "helpers" / "start_benches.py"), *map(str, BENCHES)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("bench", BENCHES, ids=lambda path: path.name)
def test_every_bench_starts(bench, started):
    code, stderr = started[bench.name]
    assert code == 0, stderr
