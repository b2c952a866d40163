"""The --smoke modes of the benches that build small generated projects: bench_parallel,
bench_dask and bench_recipes (tests/quick/test_bench_smoke.py says why benches run here)."""

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


def test_bench_recipes_smoke_runs_the_wheel_recipe_from_a_fresh_venv_offline():
    out = smoke("bench_recipes.py")
    assert out.count("recipe: ") >= 5  # every README recipe extracted, each with a buildfuzz line
    assert "-> verdict: " in out and "nothing left in the tree" in out  # ran to its verdict, store outside
    assert "stores under XDG_CACHE_HOME: 1" in out
