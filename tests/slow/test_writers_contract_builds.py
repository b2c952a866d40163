"""Writer processes in the contracts: the report's `writer_process` (JSON round trip and
schema), the scenario format's `writer` expectation and `localize_budget`, and the bench
that measures what writer-process replays save (its smoke mode)."""

from __future__ import annotations

from test_bench_smoke import smoke


def test_the_writers_bench_runs_in_its_smoke_mode():
    out = smoke("bench_writers.py")
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("step ", "writer "))]
    assert [r[0] for r in rows] == ["step", "writer"] and rows[1][-2] == "writer", out
