"""bench_replay_entry's --smoke mode (tests/quick/test_bench_smoke.py says why benches run
in tests): replays of `true` entering a namespace each, in the slot's namespace, and in none."""

import pytest

from test_bench_smoke import smoke


@pytest.mark.needs("unshare")  # replay slots need mount namespaces
def test_bench_replay_entry_smoke_compares_the_three_ways_to_run_a_replay():
    out = smoke("bench_replay_entry.py")
    for mode in ("per replay", "slot's namespace", "none"):
        assert f"  {mode:<17} per replay: CPU" in out
    assert "namespace cost per replay, CPU: per replay" in out
