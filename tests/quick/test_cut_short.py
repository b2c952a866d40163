"""What the localization budget cut short (fuzzer/report/cut_short.py): pure arithmetic on
measured times."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.model import AuditSummary, Culprit, Kind, Unfinished
from fuzzer.report.cut_short import cut_short


def _culprit(name: str, unfinished: Unfinished | None, seconds: float) -> Culprit:
    return Culprit(command=name, argv=[name], cwd="/", outputs=["x"], kind=Kind.INTRINSIC, unfinished=unfinished,
                   unfinished_s=seconds)


def _audit(short: int, seconds: float) -> AuditSummary:
    return AuditSummary(share=1.0, reaching=3, audited=3, roots=0, left=0, why_left="", parallel=2, wall_s=1.0,
                        step_s=1.0, short=short, unfinished_s=seconds)


def test_nothing_cut_short_or_no_bound_says_nothing():
    done = [_culprit("a", None, 0.0)]
    assert cut_short(done, _audit(0, 0.0), (), 180.0, 2) is None
    assert cut_short([_culprit("a", Unfinished.STABILISER_SEARCH, 60.0)], None, (), float("inf"), 2) is None


@given(st.lists(st.floats(0.0, 3600.0), min_size=1, max_size=8), st.floats(0.0, 3600.0), st.integers(1, 8),
       st.floats(1.0, 7200.0))
def test_the_estimate_shares_the_slots_but_never_shortens_one_claim(searches, audit_s, slots, budget_s):
    culprits = [_culprit(f"k{i}", Unfinished.STABILISER_SEARCH, s) for i, s in enumerate(searches)]
    cut = cut_short(culprits, _audit(4, audit_s), (), budget_s, slots)
    assert cut.unsearched == [c.command for c in culprits] and cut.short_steps == 4
    assert cut.more_s >= max(searches) - 0.05
    assert cut.more_s <= (sum(searches) + audit_s) / slots + max(searches) + 0.05
    assert cut.suggested_s >= budget_s + cut.more_s - 0.05 and cut.suggested_s % 60 == 0


def test_undecided_culprits_and_unexplained_roots_count_apart():
    cut = cut_short([_culprit("a", Unfinished.REPLAYS, 30.0), _culprit("b", Unfinished.STABILISER_SEARCH, 90.0)],
                    None, (40.0, 50.0), 180.0, 2)
    assert (cut.unsearched, cut.undecided, cut.unexplained_roots) == (["b"], ["a"], 2)
    assert cut.more_s == 105.0 and cut.suggested_s == 300.0


@given(st.floats(0.01, 600.0), st.sampled_from([(), ("ASLR",), ("PYTHONHASHSEED", "ASLR")]))
def test_a_root_left_unexplained_is_estimated_with_its_stabiliser_search(duration_s, only):
    """Its plain replays alone said 10 minutes would complete a NNPACK run that 45 did not."""
    from fuzzer.execute.step_replay import REPLAYS
    from fuzzer.explain.stabilizers import CONFIRM_REPLAYS, SCREEN_REPLAYS, explaining_s

    assert explaining_s(duration_s, only) >= (REPLAYS + SCREEN_REPLAYS + CONFIRM_REPLAYS) * duration_s
