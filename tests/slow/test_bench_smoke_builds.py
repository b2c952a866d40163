"""The --smoke modes of the benches that build small generated projects: bench_parallel
and bench_dask (tests/quick/test_bench_smoke.py says why benches run here)."""

import pytest

from test_bench_smoke import smoke


@pytest.mark.needs("unshare")  # --parallel needs mount namespaces
def test_bench_parallel_smoke_compares_builds_per_hour():
    out = smoke("bench_parallel.py")
    assert "sleep-bound  ratio parallel 2 / parallel 1:" in out


def test_bench_dask_smoke_times_a_run_on_a_worker():
    pytest.importorskip("distributed", reason="bench_dask needs buildfuzz[dask]")
    out = smoke("bench_dask.py")
    assert "ratio dask / local:" in out and "network per run:" in out
