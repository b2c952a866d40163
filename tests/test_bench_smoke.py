"""Every bench's --smoke mode runs its measured path for real, on the smallest input that
still does (bench/README.md says what each one does). Benches rot when nothing runs them:
an API that moves breaks a test here, not a bench nobody runs. No timing is asserted: a
smoke run prints the same table as a full one, and the test checks that it got that far.
bench_audit, bench_writers, bench_bisect, bench_compare, bench_scale and bench_trace have
their smoke runs in their own test files. None of these touch the network."""

import subprocess
import sys

import pytest

from conftest import ROOT
from fuzzer.tools import unshare


def smoke(bench: str, timeout: int = 600) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / bench), "--smoke"], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_bench_hash_smoke_compares_take_manifest_with_cat():
    out = smoke("bench_hash.py")
    assert "cat > /dev/null" in out and "buildfuzz take_manifest" in out
    assert "ratio take_manifest / cat (throughput):" in out


@pytest.mark.slow
def test_bench_core_smoke_runs_overhead_hashing_and_detection():
    out = smoke("bench_core.py")
    assert "ratio buildfuzz / bare (medians)" in out
    assert "ratio take_manifest / cat (throughput)" in out
    assert "measured (verdict = unreproducible): hashseed" in out and "1/1" in out


@pytest.mark.slow
def test_bench_guided_smoke_counts_builds_and_holds():
    out = smoke("bench_guided.py")
    assert all(f"mkdir-race {label}" in " ".join(out.split()) for label in ("guided", "schedule", "plain"))
    assert "hold 200 ms" in out and "/2" in out


@pytest.mark.slow
def test_bench_localize_smoke_localizes_one_shape():
    out = smoke("bench_localize.py")
    assert "timestamp" in out and "localize s" in out


@pytest.mark.slow
@pytest.mark.skipif(unshare.isolation() is None, reason="--parallel needs mount namespaces (unshare)")
def test_bench_parallel_smoke_compares_builds_per_hour():
    out = smoke("bench_parallel.py")
    assert "sleep-bound  ratio parallel 2 / parallel 1:" in out


@pytest.mark.slow
def test_bench_dask_smoke_times_a_run_on_a_worker():
    pytest.importorskip("distributed", reason="bench_dask needs buildfuzz[dask]")
    out = smoke("bench_dask.py")
    assert "ratio dask / local:" in out and "network per run:" in out


@pytest.mark.slow
def test_bench_trust_smoke_scores_a_clean_build_and_a_race():
    out = smoke("bench_trust.py")
    assert "hazards on reproducible scenarios: none" in out
    assert "mkdir-race" in out.split("(2) builds to first detection")[1]


@pytest.mark.slow
def test_real_builds_smoke_fuzzes_a_generated_tree_without_the_network():
    out = smoke("real_builds.py")
    assert "== smoke generated" in out and "verdict reproducible" in out
    assert "smoke    reproducible" in out
