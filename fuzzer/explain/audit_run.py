"""The step audit, run: one traced build, then each planned step (`fuzzer.explain.audit`)
replayed alone on its tree, and every step that varies classified as a root.

Each step is replayed as what wrote its compared outputs (`fuzzer.explain.writer`: the
smallest replayable process, else the step), REPLAYS times with its traced argv, cwd and
environment, every file it wrote put back first (`fuzzer.execute.step_replay`). One that
gives more than one output is a root of its own: classify and the stabiliser search take
it from there, as for a root two builds found, and no second build is needed. Identical
replays only bound what is left: k of them put the variation below 3/k at 95%, and the
report says so. Steps are replayed N at once (`--parallel`, else the CPU count), each in a
slot of its own (`fuzzer.execute.replay_slots`); the audit stops starting steps when its
budget would not hold the next one.
"""

from __future__ import annotations

import functools
import shlex
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from msgspec import structs

from fuzzer.execute.replay_slots import Slots, in_slots, replay_slots
from fuzzer.execute.run import RunKind
from fuzzer.execute.step_replay import REPLAYS, SPREAD_S, Variation
from fuzzer.explain import audit
from fuzzer.explain.budget import Budget
from fuzzer.explain.builds import Builds
from fuzzer.explain.classify import Context, classify
from fuzzer.explain.writer import ReplayTargets, mtimes_of
from fuzzer.model import AuditResult, Culprit
from fuzzer.report.model import AuditedStep, AuditSummary
from fuzzer.trace.steps import load_trace


@dataclass(frozen=True)
class AuditOutcome:
    summary: AuditSummary
    culprits: tuple[Culprit, ...]
    notes: tuple[str, ...]
    budget: Budget  # the audit's, which localization then spends the rest of


def run_audit(builds: Builds, executor, budget: Budget, share: float, last_audits: dict[str, str]) -> AuditOutcome:
    """Trace the reference once, replay the planned steps alone (`share` of them, the least
    recently audited first: `last_audits`, by step identity), classify those that vary."""
    record = executor.run(builds.request(RunKind.TRACE_REFERENCE, builds.runs[0].perturbation, trace=True))
    if not record.ok or record.trace_path is None:
        return AuditOutcome(_summary(share, 0, [], 0, "the traced build failed", 0, 0.0), (),
                            (f"step audit not run: the traced reference build failed (exit {record.exit_code})",), budget)
    trace = load_trace(record.trace_path, builds.tree)
    compared = set(builds.selection.compared(record.manifest).entries) if record.manifest else set()
    mtimes = mtimes_of(record.manifest)
    plan = audit.plan(trace, compared, share, builds.selection.artifacts, last_audits, mtimes)
    targets = ReplayTargets(trace, trace, record.perturbation.jobs, mtimes=mtimes)
    with replay_slots(executor, record, builds.replays_at_once, builds.logs / "audit") as slots:
        started = time.monotonic()
        rows, culprits, why_left = _replay_planned(plan.chosen, slots, targets, record, builds.stabilizers, budget)
        wall_s = time.monotonic() - started
    left = sum(r.result == AuditResult.LEFT for r in rows) + len(plan.deferred)
    if plan.deferred:
        asked = f"--check-steps {share:.0%} of {len(plan.chosen) + len(plan.deferred)} replayable steps"
        why_left = f"{why_left}; " if why_left else ""
        why_left += f"{len(plan.deferred)} left for later campaigns by {asked} (the least recently audited go first)"
    rows += [_row(a, targets, AuditResult.LEFT, "left for a later campaign (--check-steps share)")
             for a in plan.deferred]
    rows += [AuditedStep(u.identity, u.step.command, u.step.cwd, [], AuditResult.NOT_REPLAYABLE,
                         f"not replayable: {u.reason}")
             for u in plan.unreplayable]
    summary = _summary(share, len(plan.chosen) + len(plan.deferred) + len(plan.unreplayable), rows,
                       left, why_left, slots.at_once, wall_s)
    serial = f"step replays ran one at a time: {slots.serial_reason}" if slots.serial_reason else ""
    return AuditOutcome(summary, tuple(culprits), (serial,) if serial and summary.audited else (), budget)


def _replay_planned(chosen, slots: Slots, targets: ReplayTargets, record, stabilizers: tuple[str, ...],
                    budget: Budget):
    """Each planned step replayed in the first free slot, in plan order, while the budget
    holds the next one's replays; (rows in plan order, culprits, why steps were left)."""
    contexts = [Context(record, record, functools.partial(_replayer, slots, k, targets, record.perturbation.cpus),
                        budget=budget, stabilizers=stabilizers, replay_seconds=lambda c: targets.of(c).duration)
                for k in range(slots.count)]
    why_left: list[str] = []

    def audit_in(item: audit.Audited, context: Context):
        cost = REPLAYS * targets.of(item.candidate).duration + SPREAD_S
        if why_left or not budget.affords(cost):
            why_left[:] = why_left or [f"{budget.describe()} would not hold the next step's {REPLAYS} replays "
                                       f"(about {cost:.0f} s, {max(budget.left(), 0):.0f} s left)"]
            return _row(item, targets, AuditResult.LEFT, why_left[0]), None
        return _audit_one(item, targets, context)

    done = in_slots(chosen, contexts, audit_in)
    return [row for row, _ in done], [c for _, c in done if c is not None], why_left[0] if why_left else ""


def _replayer(slots: Slots, slot: int, targets: ReplayTargets, cpus, candidate):
    return slots.replayer(slot, targets.of(candidate).call, cpus)


def _audit_one(item: audit.Audited, targets: ReplayTargets, context: Context) -> tuple[AuditedStep, Culprit | None]:
    started = time.monotonic()
    with context.replayer_for(item.candidate) as replayer:
        plain = replayer.replay(Variation("plain"), REPLAYS)
    if plain.failed:
        return _row(item, targets, AuditResult.REPLAY_FAILED, f"replayed alone it {plain.failure}", started), None
    if not plain.varies:
        detail = (f"{REPLAYS}/{REPLAYS} replays alone gave the same bytes: any variation left is below "
                  f"{3 / REPLAYS:.0%} of replays (95%)")
        return _row(item, targets, AuditResult.STABLE, detail, started), None
    detail = f"{plain.distinct} distinct outputs in {REPLAYS} replays alone, from the traced build's inputs"
    culprit = classify(item.candidate, context)
    evidence = f"step audit: {detail}, with no second build; {culprit.evidence}"
    culprit = targets.annotate(structs.replace(culprit, evidence=evidence), item.candidate)
    return _row(item, targets, AuditResult.VARIES, detail, started), culprit


def _row(item: audit.Audited, targets: ReplayTargets, result: AuditResult, detail: str, started: float | None = None
         ) -> AuditedStep:
    step, call = item.step, targets.of(item.candidate).call
    ran = result.replayed
    return AuditedStep(
        identity=item.identity, command=step.command, cwd=step.cwd, outputs=list(item.candidate.outputs),
        result=result, detail=detail, replays=REPLAYS if ran else 0,
        seconds=round(time.monotonic() - started, 3) if started is not None else 0.0,
        last_audit=item.last_audit, audited=_now() if ran else "", replay=f"cd {shlex.quote(call.cwd)} && {shlex.join(call.argv)}",
    )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _summary(share: float, reaching: int, rows: list[AuditedStep], left: int, why_left: str, parallel: int,
             wall_s: float) -> AuditSummary:
    audited = [r for r in rows if r.replays]
    return AuditSummary(share=share, reaching=reaching, audited=len(audited),
                        roots=sum(r.result == AuditResult.VARIES for r in rows), left=left, why_left=why_left,
                        parallel=parallel, wall_s=round(wall_s, 3), step_s=round(sum(r.seconds for r in audited), 3),
                        steps=rows)
