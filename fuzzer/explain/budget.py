"""The localization budget: how long tracing, step replays and shrinking may take.

It is `--localize-budget` when given, else what `--budget` leaves, else DEFAULT_BUILDS
builds' time (the reference build's wall time), at least DEFAULT_MIN_S: one intrinsic
step with a 5 s replay needs about 30 replays to name a joint stabiliser with 1%
confidence. Given both, the smaller wins. Work is started only when it is expected to
end inside the budget; what could not be explained is named in the report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

DEFAULT_BUILDS = 3
DEFAULT_MIN_S = 180.0
# A root whose first replays would take more than this share of what is left is explained
# from the traces alone: one slow step must not starve every other root.
REPLAY_SHARE = 0.5


@dataclass(frozen=True)
class Budget:
    deadline: float  # time.monotonic() at which localization stops starting work
    seconds: float  # the whole budget, for the report
    origin: str  # where it came from, for the report: "--localize-budget", ...

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def affords(self, seconds: float) -> bool:
        return seconds <= self.left()

    def affords_replays(self, seconds: float) -> bool:
        """Whether a root's first replays fit in its share of what is left."""
        return seconds <= REPLAY_SHARE * self.left()

    def describe(self) -> str:
        return f"the localization budget ({self.seconds:.0f} s, {self.origin})"


UNLIMITED = Budget(float("inf"), float("inf"), "unbounded")


def localization_budget(localize_budget_s: float | None, campaign_left_s: float, reference_wall_s: float) -> Budget:
    """The budget for one localization, starting now."""
    default = max(DEFAULT_BUILDS * reference_wall_s, DEFAULT_MIN_S)
    choices = [(campaign_left_s, "what --budget left")]
    if localize_budget_s is not None:
        choices.append((localize_budget_s, "--localize-budget"))
    elif campaign_left_s == float("inf"):
        choices.append((default, f"default: {DEFAULT_BUILDS} builds' time, at least {DEFAULT_MIN_S:.0f} s"))
    seconds, origin = min(choices, key=lambda c: c[0])
    seconds = max(seconds, 0.0)
    return Budget(time.monotonic() + seconds, seconds, origin)
