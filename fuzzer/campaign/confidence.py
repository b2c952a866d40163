"""--until-confidence P: build past --runs until the clean builds drawn by the schedule
bound the chance of a divergence per build below P at 95% (the exact bound
1 - 0.05^(1/n) of fuzzer/stats.py: 59 clean builds for 5%), or the budget ends. A
divergence or a failure ends it as --runs would: the question is then answered."""

from __future__ import annotations

from fuzzer import rates
from fuzzer.campaign.state import Campaign
from fuzzer.config import FuzzConfig
from fuzzer.guided import MAX_TARGETS
from fuzzer.memory import REMEMBERED
from fuzzer.model import ExitReason
from fuzzer.stats import CONFIDENCE, clean_builds_for_bound, percent_above_tenth, upper_bound_zero

CHOSEN_RUNS = REMEMBERED + MAX_TARGETS + 1  # runs the schedule did not draw (remembered, targets, their control)


def planned(config: FuzzConfig) -> int:
    """How many runs to plan: --runs, or enough for the clean builds the goal needs."""
    if config.until_confidence is None:
        return config.runs
    return max(config.runs, 1 + clean_builds_for_bound(config.until_confidence) + CHOSEN_RUNS)


def stop_before(campaign: Campaign, index: int | None) -> ExitReason:
    """Why run `index` does not start although planned (UNSET to go on)."""
    config = campaign.config
    if config.until_confidence is None or index is None or index < config.runs:
        return ExitReason.UNSET
    if campaign.diverged():
        return ExitReason.ALL_RUNS_DONE  # the --runs builds were made: a divergence needs no bound
    if clean_builds(campaign) >= clean_builds_for_bound(config.until_confidence):
        return ExitReason.CONFIDENCE_REACHED
    return ExitReason.UNSET


def clean_builds(campaign: Campaign) -> int:
    """Drawn perturbed builds that succeeded and matched the reference."""
    return sum(r.ok and not campaign.differs_from_reference(r) for r in campaign.runs
               if r.index > 0 and r.reason not in rates.CHOSEN)


def notes(campaign: Campaign) -> list[str]:
    goal = campaign.config.until_confidence
    if goal is None or not campaign.runs:
        return []
    needed, clean = clean_builds_for_bound(goal), clean_builds(campaign)
    asked = f"--until-confidence {goal:.1%}"
    if campaign.diverged():
        return [f"{asked}: the builds diverged or failed, so no bound was needed; stopped after --runs"]
    if clean >= needed:
        return [f"{asked}: met, {clean} clean builds bound the chance of a divergence per build below "
                f"{percent_above_tenth(upper_bound_zero(clean))} at {CONFIDENCE:.0%} ({needed} needed)"]
    return [f"{asked}: not met, {clean} of the {needed} clean builds it needs ({campaign.exit_reason}): "
            f"the bound reached is {percent_above_tenth(upper_bound_zero(clean))}"]
