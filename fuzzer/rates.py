"""rates: how often each finding showed, with the exact interval that count earns, and the
bound a reproducible verdict earned (fuzzer/stats.py does the arithmetic).

A rate is a count of builds that could have shown the finding: a divergent artifact
differs from the reference's variant in k of the n successful perturbed builds; a failure
is k of the n perturbed builds; a culprit shows in the builds where an artifact it writes
diverged; a hazard is manifest in the perturbed builds that showed its conflict (the
`runs` its evidence cites: a file both steps wrote differs, a failure names its file),
of the n perturbed builds (a latent one: 0 of n). Traced reruns are not drawn builds and
never count. Runs chosen for what they would show, not drawn by the schedule (the
remembered replays of what diverged before, the held targets), are left out of every
count: they would inflate the rate they were chosen for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from fuzzer import findings, structs
from fuzzer.model import ArtifactFinding, AxisBound, Culprit, Hazard, Reason, Report, RunStatus, RunSummary, Verdict
from fuzzer.axes import AXES, Axis
from fuzzer.stats import (CONFIDENCE, interval, percent, percent_above, percent_above_tenth, rate_text,
                          upper_bound_zero)

METHOD = "exact binomial (Clopper-Pearson)"
CHOSEN = frozenset({Reason.REMEMBERED.value, Reason.TARGET.value, Reason.CONTROL.value})


class Rate(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A count with the exact interval it earns: a finding's `rate` and `pooled`, and the
    report's `confidence`. UNSET fields are left out of the JSON."""

    seen: int
    builds: int
    low: float
    high: float
    confidence: float
    method: str
    text: str
    upper_bound: float | None | msgspec.UnsetType = msgspec.UNSET  # the verdict's confidence only
    campaigns: int | msgspec.UnsetType = msgspec.UNSET  # pooled counts only
    # a culprit's only: the builds, beyond `seen`, whose divergence it shares with other culprits
    shared: int | msgspec.UnsetType = msgspec.UNSET


@dataclass(frozen=True)
class Count:
    seen: int
    builds: int
    shared: int = 0  # a culprit's builds whose divergence no one culprit's own output shows (`Credit`)

    def rate(self, text: str = "", method: str = METHOD, **more) -> Rate:
        """The count's Rate; `text` defaults to "k of n builds (95% interval ...)"."""
        low, high = interval(self.seen, self.builds)
        if self.shared:
            more["shared"] = self.shared
        return Rate(self.seen, self.builds, round(low, 6), round(high, 6), CONFIDENCE, method,
                    (text or rate_text(self.seen, self.builds)) + _shared_text(self.shared), **more)


def _shared_text(shared: int) -> str:
    return (f"; in {shared} more the file it leads to differed while no culprit's own compared output did: "
            f"shared with the other culprits that lead there, which one caused it is not known") if shared else ""


@dataclass(frozen=True)
class Credit:
    """The runs a culprit's divergence is credited to: `own` (its own output differed there,
    or it alone leads to the file that did) and `shared` (several culprits lead to the file
    that differed, and none's own output did: which one caused it is not known)."""

    own: frozenset[int]
    shared: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Tally:
    """A campaign's counts (finding id → Count), and the builds each kind of finding could
    have shown in: what a finding it did not see (found fixed) adds to its pooled count."""

    counts: dict = field(default_factory=dict)
    builds: dict = field(default_factory=dict)


def tally(runs: list[RunSummary], artifacts: list[ArtifactFinding], culprits: list[Culprit],
          hazards: list[Hazard], compared: frozenset[str] = frozenset()) -> Tally:
    kinds = (findings.ARTIFACT, findings.FAILURE, findings.CULPRIT, findings.HAZARD)
    return Tally(counts(runs, artifacts, culprits, hazards, compared), {kind: builds_of(runs, kind) for kind in kinds})


def counts(runs: list[RunSummary], artifacts: list[ArtifactFinding], culprits: list[Culprit],
           hazards: list[Hazard], compared: frozenset[str] = frozenset()) -> dict[str, Count]:
    """Finding id → its count in this campaign's drawn builds (none where there was no build);
    `compared`: the files the builds compared (a culprit's output among them that did not
    diverge in a build shows the culprit did not change that build)."""
    perturbed = drawn(runs)
    ok = [r.index for r in perturbed if r.status == RunStatus.OK]
    found: dict[str, Count] = {}
    for artifact in artifacts:
        found[findings.of_artifact(artifact).id] = Count(len(diverging(artifact) & set(ok)), len(ok))
    failed = [r for r in runs[1:] if r.status != RunStatus.OK] if runs and runs[0].status == RunStatus.OK else []
    for run in failed:
        if run.reason in CHOSEN:
            continue
        fid = findings.of_failure(run).id
        found[fid] = Count(found[fid].seen + 1 if fid in found else 1, len(perturbed))
    for culprit in culprits:
        credit = credited(culprit, culprits, artifacts, compared)
        if credit is not None:
            found.setdefault(findings.of_culprit(culprit).id,
                             Count(len(credit.own & set(ok)), len(ok), len(credit.shared & set(ok))))
    indices = {r.index for r in perturbed}
    for hazard in hazards:
        found.setdefault(findings.of_hazard(hazard).id, Count(len(set(hazard.runs) & indices), len(perturbed)))
    return {fid: count for fid, count in found.items() if count.builds > 0}


def builds_of(runs: list[RunSummary], kind: str) -> int:
    """The builds that could have shown a finding of this kind: the denominator a campaign
    that did not see it adds to its pooled count."""
    perturbed = drawn(runs)
    if kind in (findings.FAILURE, findings.HAZARD):
        return len(perturbed)
    return sum(r.status == RunStatus.OK for r in perturbed)


def drawn(runs: list[RunSummary]) -> list[RunSummary]:
    """The perturbed runs the schedule drew (an explore run's reason says why it ran)."""
    return [r for r in runs if r.index > 0 and r.reason not in CHOSEN]


def diverging(artifact: ArtifactFinding) -> set[int]:
    """Runs whose variant of the artifact is not the reference's (the reference is run 0)."""
    return {i for g in artifact.groups if 0 not in g.runs for i in g.runs}


def culprit_runs(culprit: Culprit, artifacts: list[ArtifactFinding]) -> set[int] | None:
    """The runs in which an artifact the culprit writes, or the one it leads to, diverged."""
    written = set(culprit.outputs) | set(culprit.chain[:1])
    matched = [a for a in artifacts if a.path in written]
    return set().union(*map(diverging, matched)) if matched else None


def credited(culprit: Culprit, culprits: list[Culprit], artifacts: list[ArtifactFinding],
             compared: frozenset[str] = frozenset()) -> Credit | None:
    """Which runs' divergence is `culprit`'s (None: no artifact it writes or leads to
    diverged). A run is its own where its own output diverged. Where only the artifact its
    chain leads to did, the run is the culprit's whose own output diverged there; none of it
    is this culprit's when its outputs are all `compared` (they were the reference's there);
    else the run is its own when no other culprit of `culprits` leads there, else shared by
    those that do."""
    varied = {a.path: diverging(a) for a in artifacts}
    if culprit_runs(culprit, artifacts) is None:
        return None
    own = _own_runs(culprit, varied)
    shared: set[int] = set()
    unseen = not set(culprit.outputs) <= compared  # some output of it the builds did not compare
    for led in (p for p in culprit.chain[:1] if p in varied and unseen):
        behind = [c for c in culprits if led in c.chain[:1] or led in c.outputs]
        for run in varied[led] - own:
            if any(run in _own_runs(c, varied) for c in behind):
                continue  # another culprit's own output diverged in it: its divergence, not this one's
            (own if len(behind) <= 1 else shared).add(run)
    return Credit(frozenset(own), frozenset(shared))


def _own_runs(culprit: Culprit, varied: dict[str, set[int]]) -> set[int]:
    """The runs in which one of the culprit's own outputs diverged."""
    return set().union(*(varied[p] for p in culprit.outputs if p in varied))


def verdict_confidence(report: Report) -> dict:
    """What the campaign's count of diverging drawn builds says: for a reproducible verdict,
    the exact one-sided bound 1 - 0.05^(1/n) on the chance of a divergence per build."""
    ok = [r for r in drawn(report.runs) if r.status == RunStatus.OK]
    if not ok or not report.runs or report.runs[0].status != RunStatus.OK:
        return {}
    reference = report.runs[0].group
    count = Count(sum(r.group != reference for r in ok), len(ok))
    bound = upper_bound_zero(count.builds)
    left_out = sum(r.reason in CHOSEN for r in report.runs)
    aside = f" (not counting {left_out} run(s) chosen rather than drawn: remembered replays, held targets)" \
        if left_out else ""
    if count.seen == 0 and report.verdict == Verdict.REPRODUCIBLE:
        text = (f"0 of {count.builds} builds diverged: the chance of a divergence per build is below "
                f"{percent_above_tenth(bound)} at {CONFIDENCE:.0%} (exact bound "
                f"1 - {1 - CONFIDENCE:.2f}^(1/{count.builds})){aside}")
        return structs.to_data(count.rate(text, "exact one-sided bound for 0 of n", upper_bound=round(bound, 6)))
    # scoped in its words: failed builds are not in it, and an unreproducible verdict may rest on them
    return structs.to_data(count.rate(f"successful drawn builds that diverged from the reference: "
                                      f"{rate_text(count.seen, count.builds)}{aside}", upper_bound=None))


def axis_bounds(report: Report, axes: tuple[Axis, ...] = AXES) -> list[AxisBound]:
    """Each axis whose samples are seeds, for the drawn runs that took one (its extremes,
    such as `shuffle=reverse`, are one fixed value, not a trial): how many failed or
    differed from the reference, and with none, the exact bound that count earns. An axis
    whose runs did not reach the whole build (its scope names a problem) earns none."""
    if not report.runs or report.runs[0].status != RunStatus.OK:
        return []
    unreached = {s.axis for s in report.scope if s.problem}
    bounds = []
    for axis in (a for a in axes if a.fresh and a.name not in unreached):
        trials = list(_first_with_each_seed(axis, drawn(report.runs)).values())
        if trials:
            count = Count(sum(r.status != RunStatus.OK or r.group != report.runs[0].group for r in trials), len(trials))
            bounds.append(AxisBound(axis.name, axis.label, structs.to_data(_axis_rate(axis, count))))
    return bounds


def _first_with_each_seed(axis: Axis, runs: list[RunSummary]) -> dict[str, RunSummary]:
    """Seed → the first run that took it: a repeat of a seed is not another trial."""
    firsts: dict[str, RunSummary] = {}
    for run in runs:
        value = run.perturbation.get("variations", {}).get(axis.name)
        if value is not None and value not in axis.extremes:
            firsts.setdefault(value, run)
    return firsts


def _axis_rate(axis: Axis, count: Count) -> Rate:
    n, noun = count.builds, axis.fresh
    if count.seen == 0:
        bound = upper_bound_zero(n)
        text = (f"{axis.name}: {n} {noun}, none failed or diverged: a failure or divergence showing with "
                f"{percent_above(bound)} of {noun} or more would have shown at {CONFIDENCE:.0%}")
        return count.rate(text, "exact one-sided bound for 0 of n", upper_bound=round(bound, 6))
    low, high = interval(count.seen, n)
    return count.rate(f"{axis.name}: {count.seen} of {n} {noun} failed or diverged, whatever the cause (the findings "
                      f"name it) ({CONFIDENCE:.0%} interval {percent(low)}–{percent(high)})", upper_bound=None)


def pooled_text(seen: int, builds: int, campaigns: int) -> str:
    nights = "1 campaign" if campaigns == 1 else f"{campaigns} campaigns"
    return f"over {nights}: {rate_text(seen, builds)}"



def described(finding) -> str:
    """A finding's rate for reading: this campaign's count, and over nights when more than one counted it."""
    if not finding.rate:
        return ""
    pooled = finding.pooled
    over = f"; {pooled['text']}" if pooled and pooled.get("campaigns", 1) > 1 else ""
    return finding.rate["text"] + over
