"""What a bisection builds at each commit and how it judges a build: a stored finding's
own reproducer (the perturbation of a run that showed it, with its hold when it has one,
and what showing means for its kind), or, without a finding, a divergence or failure
under the latest campaign's divergent perturbation. The tries per commit follow from the
finding's rate measured over every campaign in the store (fuzzer/rates.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer import findings, rates, structs
from fuzzer.compare import bookkeeping
from fuzzer.errors import UsageError
from fuzzer.escaping import shown
from fuzzer.execute.run import RunRecord
from fuzzer.model import HazardStatus, Report, RunStatus, available_cpus
from fuzzer.plan import Perturbation
from fuzzer.report import json_format
from fuzzer.stats import interval
from fuzzer.store import Store

DEFAULT_JOBS = 8  # a missing prerequisite needs a few jobs at once to show


@dataclass(frozen=True)
class Reproducer:
    command: str
    source: Path  # the build's directory in the user's checkout
    perturbation: Perturbation
    finding: str = ""  # its id; "" for any divergence or failure
    kind: str = ""  # artifact | failure | culprit | hazard
    what: str = ""  # the artifact's path, or the failure's signature
    # the rate the tries are sized for: --rate as given, else the low end of the measured rate's
    # 95% interval (at the point estimate, a commit where it shows less often passes too easily)
    rate: float | None = None  # None: neither given nor measured
    rate_from: str = ""  # what the rate rests on, as the plan says it
    ignore: tuple[str, ...] = bookkeeping.GLOBS  # a build system's bookkeeping is no finding's showing

    def shows(self, record: RunRecord, reference: RunRecord) -> bool:
        """Whether one perturbed build showed the finding, against the same commit's reference."""
        if self.kind == findings.FAILURE:
            return not record.ok and f"build {findings.failure_signature(record.status, record.log_tail)}" == self.what
        if not record.ok:
            return self.kind != findings.ARTIFACT  # an artifact's finding is its content, not a failed build
        differing = record.built.select((), self.ignore).differing(reference.built.select((), self.ignore))
        return self.what in differing if self.kind == findings.ARTIFACT else bool(differing)

    def describe(self) -> str:
        what = f"finding {self.finding} ({self.what or self.kind})" if self.finding else "a divergence or failure"
        return f"{what} under {self.perturbation.describe()}"


def from_finding(store: Store, finding_id: str) -> Reproducer:
    """A stored finding's reproducer: the latest campaign that showed it, one of its runs that did."""
    row = store.finding_anywhere(finding_id)
    if row is None:
        raise UsageError(f"finding {shown(finding_id)} is not in the store {shown(str(store.root))}")
    source, command, kind, what = row
    for _, data in store.reports_of(source, command):
        report = json_format.from_builtins(data)
        runs = _showing_runs(findings.with_ids(report), finding_id, kind)
        if runs:
            perturbation = structs.convert(report.runs[min(runs)].perturbation, Perturbation)
            rate, rate_from = sized_rate(store.pooled_counts(source, command).get(finding_id))
            return Reproducer(command, Path(source), perturbation, finding_id, kind, _what(kind, what), rate, rate_from)
    raise UsageError(f"finding {finding_id} has no stored run that showed it: nothing to replay at each commit")


def any_divergence(store: Store | None, source: Path, command: str | None, seed: int) -> Reproducer:
    """Without a finding: the latest stored campaign's first diverging or failing run of this
    source (its command too, unless one is given), else a jittered -j8 build."""
    latest = store.latest_report_of(str(source.resolve())) if store else None
    if latest is not None:
        stored_command, data = latest
        report = json_format.from_builtins(data)
        telling = [r for r in report.runs[1:] if r.status != RunStatus.OK or r.group != report.runs[0].group]
        if telling and (command is None or command == stored_command):
            counted = report.confidence
            rate, rate_from = sized_rate((counted["seen"], counted["builds"], 1) if counted else None)
            return Reproducer(stored_command, source, structs.convert(telling[0].perturbation, Perturbation),
                              rate=rate, rate_from=rate_from)
    if command is None:
        raise UsageError("no build command: give one after -- (buildfuzz bisect --good A --bad B -- make -j{jobs}), "
                         "or a FINDING from the store")
    cpus = available_cpus()
    return Reproducer(command, source, Perturbation(jobs=DEFAULT_JOBS, cpus=cpus, jitter=0.5, seed=seed))


def sized_rate(pooled: tuple[int, int, int] | None) -> tuple[float | None, str]:
    """The low end of a stored count's 95% interval, and what it rests on."""
    if not pooled or pooled[0] <= 0 or pooled[1] <= 0:
        return None, ""
    seen, builds, campaigns = pooled
    low = interval(seen, builds)[0]
    return low, f"it showed {rates.pooled_text(seen, builds, campaigns)}; sized for {low:.1%}, that interval's low end"


def _what(kind: str, what: str) -> str:
    return what if kind in (findings.ARTIFACT, findings.FAILURE) else ""


def _showing_runs(report: Report, finding_id: str, kind: str) -> set[int]:
    """The runs of a report in which the finding showed."""
    if kind == findings.FAILURE:
        return {r.index for r in report.runs if r.finding_id == finding_id}
    if kind == findings.ARTIFACT:
        return set().union(*(rates.diverging(a) for a in report.divergent_artifacts if a.finding_id == finding_id))
    if kind == findings.CULPRIT:
        culprits = [c for c in report.culprits if c.finding_id == finding_id]
        credits = [rates.credited(c, report.culprits, report.divergent_artifacts) for c in culprits]
        return set().union(*(c.own | c.shared for c in credits if c is not None))
    hazards = [h for h in report.hazards if h.finding_id == finding_id and h.status == HazardStatus.CONFIRMED]
    return {r.index for r in report.runs if hazards and r.index > 0 and "hold" in r.perturbation.get("variations", {})
            and (r.status != RunStatus.OK or r.group != report.runs[0].group)}
