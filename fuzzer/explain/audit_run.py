"""The step audit, run: one traced build, then each planned step (`fuzzer.explain.audit`)
replayed alone on its tree, and every step that varies classified as a root.

Each step is replayed as what wrote its compared outputs (`fuzzer.explain.writer`: the
smallest replayable process, else the step), with its traced argv, cwd and environment,
every file it wrote put back first (`fuzzer.execute.step_replay`): first once each, then up
to REPLAYS times the cheapest first while the budget lasts (`fuzzer.explain.audit_replays`).
One whose output differs from the traced build's is a root of its own: classify and the
stabiliser search take it from there, as for a root two builds found, and no second build
is needed; localization takes those roots over (`taken_over`) rather than replay them
again. A replay that fails checks nothing: the step is listed with why, not counted as
audited, and stays first for the next campaign. Steps are replayed N at once
(`--parallel`, else the CPU count), each in a slot of its own (`fuzzer.execute.replay_slots`).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from msgspec import structs

from fuzzer.execute.executor import Executor
from fuzzer.execute.replay_slots import Slots, in_slots, replay_slots
from fuzzer.execute.replay_spread import Replayer
from fuzzer.execute.run import RunRecord
from fuzzer.explain import audit
from fuzzer.explain.audit_replays import Steps, row
from fuzzer.explain.budget import Budget
from fuzzer.explain.builds import Builds
from fuzzer.explain.ranking import Ranked
from fuzzer.explain.classify import Context
from fuzzer.explain.writer import ReplayTargets, kept_files, mtimes_of
from fuzzer.model import AuditedStep, AuditResult, AuditSummary, Culprit, RunKind
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.steps import load_trace


@dataclass(frozen=True)
class AuditOutcome:
    summary: AuditSummary
    classified: dict[str, Culprit]  # the roots it classified, by step identity (audit.step_identity)
    notes: tuple[str, ...]
    budget: Budget  # the audit's, which localization then spends the rest of
    reference: RunRecord | None = None  # its traced build (its trace is kept in the logs)
    kept_tree: Path | None = None  # that build's tree, set aside for localization's replays (None: gone)

    @property
    def culprits(self) -> tuple[Culprit, ...]:
        return tuple(self.classified.values())


def run_audit(builds: Builds, executor: Executor, budget: Budget, share: float, last_audits: dict[str, str],
              reserve_builds: int = 0) -> AuditOutcome:
    """Trace the reference once, replay the planned steps alone (`share` of them, the least
    recently audited first: `last_audits`, by step identity), classify those that vary.
    `reserve_builds`: traced builds' time the top-up replays leave in the budget (for the
    localization that follows)."""
    record = executor.run(builds.request(RunKind.TRACE_REFERENCE, builds.runs[0].perturbation, trace=True))
    if not record.ok or record.trace_path is None:
        return AuditOutcome(_summary(share, 0, [], 0, "the traced build failed", 0, 0.0), {},
                            (f"step audit not run: the traced reference build failed (exit {record.exit_code})",), budget)
    trace = load_trace(record.trace_path, builds.tree, builds.parent_outputs)
    compared = set(builds.selection.judged(record.manifest).entries) if record.manifest else set()
    mtimes = mtimes_of(record.manifest)
    kept = kept_files(record.trace_path, trace, builds.tree, builds.parent_outputs)
    plan = audit.plan(trace, compared, share, builds.selection.artifacts, last_audits, mtimes, kept)
    targets = ReplayTargets(trace, trace, record.perturbation.jobs, mtimes=mtimes, kept=kept)
    logs = builds.logs / "audit"
    with replay_slots(executor, record, builds.replays_at_once, logs) as slots:
        started = time.monotonic()
        contexts = [Context(record, record, functools.partial(_replayer, slots, k, targets, record.perturbation.cpus),
                            budget=budget, stabilizers=builds.stabilizers,
                            replay_seconds=lambda c: targets.of(c).duration) for k in range(slots.count)]
        steps = Steps(plan.chosen, targets, record, logs, budget, reserve_builds * record.wall_s)
        in_slots(plan.chosen, contexts, steps.first, slots)
        in_slots(sorted(steps.topped_up(), key=lambda a: targets.of(a.candidate).duration), contexts, steps.more, slots)
        wall_s = time.monotonic() - started
    rows = [steps.row(a) for a in plan.chosen]
    why_left = steps.why_left
    left = sum(r.result == AuditResult.LEFT for r in rows) + len(plan.deferred)
    if plan.deferred:
        asked = f"--check-steps {share:.0%} of {len(plan.chosen) + len(plan.deferred)} replayable steps"
        why_left = f"{why_left}; " if why_left else ""
        why_left += f"{len(plan.deferred)} left for later campaigns by {asked} (the least recently audited go first)"
    rows += [row(a, targets, AuditResult.LEFT, "left for a later campaign (--check-steps share)")
             for a in plan.deferred]
    rows += [AuditedStep(u.identity, u.step.command, u.step.cwd, [], AuditResult.NOT_REPLAYABLE,
                         f"not replayable: {u.reason}")
             for u in plan.unreplayable]
    summary = _summary(share, len(plan.chosen) + len(plan.deferred) + len(plan.unreplayable), rows,
                       left, why_left, slots.at_once, wall_s)
    short, unreplayed, unfinished_s = steps.unfinished()
    summary = structs.replace(summary, short=short, unreplayed=unreplayed, unfinished_s=unfinished_s)
    serial = f"step replays ran one at a time: {slots.serial_reason}" if slots.serial_reason else ""
    notes = ((serial,) if serial and summary.audited else ()) + steps.short_note()
    return AuditOutcome(summary, steps.classified, notes, budget, record)


def taken_over(ranked: Iterable[Ranked], audited: Mapping[str, Culprit],
               found: str) -> tuple[list[tuple[Ranked, Culprit]], list[Ranked]]:
    """Of localization's ranked roots, those the audit classified, each as the audit's
    culprit (its kind, stabilisers and replays are the evidence) with what localization's
    builds add: the outputs they differ in (not every output the audit compared: dh binary
    wrote the .debs too, which matched) and the chain from an artifact, and the rest.
    `found`: how localization came to the root, as a clause of the evidence."""
    taken, rest = [], []
    for root in ranked:
        culprit = audited.get(audit.step_identity(root.root.ref)) if root.root.ref is not None else None
        if culprit is None:
            rest.append(root)
            continue
        chain = " ← ".join(root.root.chain) if len(root.root.chain) > 1 else ""
        evidence = (f"{culprit.evidence}\n{found}, and did not replay it again: its kind and stabilisers are the "
                    "step audit's above" + (f"\nchain: {chain}" if chain else ""))
        taken.append((root, structs.replace(culprit, outputs=sorted(root.root.outputs) or culprit.outputs,
                                            chain=list(root.root.chain), evidence=evidence)))
    return taken, rest


def _replayer(slots: Slots, slot: int, targets: ReplayTargets, cpus: tuple[int, ...],
              candidate: RootCandidate) -> Replayer:
    return slots.replayer(slot, targets.of(candidate).call, cpus)


def _summary(share: float, reaching: int, rows: list[AuditedStep], left: int, why_left: str, parallel: int,
             wall_s: float) -> AuditSummary:
    replayed = [r for r in rows if r.replays]
    return AuditSummary(share=share, reaching=reaching, audited=sum(r.result.replayed for r in rows),
                        roots=sum(r.result == AuditResult.VARIES for r in rows), left=left, why_left=why_left,
                        parallel=parallel, wall_s=round(wall_s, 3), step_s=round(sum(r.seconds for r in replayed), 3),
                        steps=rows)
