"""What the localization budget cut short, and about what budget would complete it; and
what a Ctrl-C during the builds cut from an unreproducible campaign (`interrupted_line`).

Without an overnight budget a long build's localization runs out: culprits named with no
stabiliser search, audited steps with fewer replays than a claim of stable needs, roots left
unexplained. The report says so near its top, with an estimate made of measured times only:
each claim's missing replays × what its step took (the audit's traced build, a culprit's
replays), added up and shared among the replay slots, as localization runs them; never less
than the longest single culprit's, which runs in one slot.
"""

from __future__ import annotations

import math
from typing import Sequence

from fuzzer.model import AuditSummary, Culprit, CutShort, ExitReason, Report, Unfinished, Verdict


def cut_short(culprits: Sequence[Culprit], audit: AuditSummary | None, unexplained_s: Sequence[float],
              budget_s: float, slots: int) -> CutShort | None:
    """None when nothing was cut short (or the budget was unbounded: nothing could be)."""
    unfinished = [c for c in culprits if c.unfinished is not None]
    short = audit.short if audit else 0
    unreplayed = audit.unreplayed if audit else 0
    if not (unfinished or short or unreplayed or unexplained_s) or not math.isfinite(budget_s):
        return None
    each = [c.unfinished_s for c in unfinished] + [audit.unfinished_s if audit else 0.0] + list(unexplained_s)
    # one claim's replays run in one slot: the slots share the work, never shorten one claim
    more_s = round(max(sum(each) / max(slots, 1), max(c.unfinished_s for c in unfinished) if unfinished else 0.0), 1)
    return CutShort(
        budget_s=round(budget_s, 1), more_s=more_s, suggested_s=60.0 * math.ceil((budget_s + more_s) / 60.0),
        unsearched=[c.command for c in unfinished if c.unfinished == Unfinished.STABILISER_SEARCH],
        undecided=[c.command for c in unfinished if c.unfinished != Unfinished.STABILISER_SEARCH],
        short_steps=short, unreplayed_steps=unreplayed, unexplained_roots=len(unexplained_s))


def cut_short_line(cut: CutShort | None, replays: int) -> str:
    """One line for the top of the text report: what was cut short, about how much more time
    completes it, and the option that gives it."""
    if cut is None:
        return ""
    parts = [f"{len(cut.unsearched)} culprit(s) without a stabiliser search" if cut.unsearched else "",
             f"{len(cut.undecided)} culprit(s) without a kind" if cut.undecided else "",
             f"{cut.short_steps} audited step(s) with fewer than {replays} replays" if cut.short_steps else "",
             f"{cut.unreplayed_steps} chosen step(s) not replayed" if cut.unreplayed_steps else "",
             f"{cut.unexplained_roots} root step(s) unexplained" if cut.unexplained_roots else ""]
    return (f"cut short by the localization budget ({_duration(cut.budget_s)}): {', '.join(p for p in parts if p)}: "
            f"about {_duration(cut.more_s)} more; rerun with --localize-budget {_duration(cut.suggested_s, True)}")


def _duration(seconds: float, option: bool = False) -> str:
    if option:
        return f"{seconds / 60:.0f}m"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} minutes"


def interrupted_line(report: Report) -> str:
    """For a campaign whose builds Ctrl-C cut once one differed: what was not done, and how to
    go on (its verdict stands on the builds that ran); "" otherwise."""
    if report.exit_reason != ExitReason.INTERRUPTED or report.verdict != Verdict.UNREPRODUCIBLE:
        return ""
    return ("cut short by an interruption during the builds: the rest of them, the step audit and localization were "
            "not done (no culprit named); `buildfuzz run --resume` with the same options does them")
