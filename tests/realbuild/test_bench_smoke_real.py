"""The --smoke modes of the benches that build bundled scenarios (bench_core, bench_guided,
bench_localize, bench_trust, bench_lines) or a package-shaped tree (real_builds, generated: no download).
tests/quick/test_bench_smoke.py says why benches run here."""

from test_bench_smoke import smoke


def test_bench_core_smoke_runs_overhead_hashing_and_detection():
    out = smoke("bench_core.py")
    assert "ratio buildfuzz / bare (medians)" in out
    assert "ratio take_manifest / cat (throughput)" in out
    assert "measured (verdict = unreproducible): hashseed" in out and "1/1" in out


def test_bench_guided_smoke_counts_builds_and_holds():
    out = smoke("bench_guided.py")
    assert all(f"mkdir-race {label}" in " ".join(out.split()) for label in ("guided", "schedule", "plain"))
    assert "hold 200 ms" in out and "/2" in out


def test_bench_localize_smoke_localizes_one_shape():
    out = smoke("bench_localize.py")
    assert "timestamp" in out and "localize s" in out


def test_bench_trust_smoke_scores_a_clean_build_and_a_race():
    out = smoke("bench_trust.py")
    assert "hazards on reproducible scenarios: none" in out
    assert "mkdir-race" in out.split("(2) builds to first detection")[1]


def test_real_builds_smoke_fuzzes_a_generated_tree_without_the_network():
    out = smoke("real_builds.py")
    assert "== smoke generated" in out and "verdict reproducible" in out
    assert "smoke    reproducible" in out


def test_bench_lines_smoke_times_a_generator_plain_and_traced():
    out = smoke("bench_lines.py")
    row = next(line for line in out.splitlines() if "gen_dispatch.py" in line)
    assert "traced" in row and "search" in row and "events)" in row and "skipped" not in row
