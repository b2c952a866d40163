"""The step audit's plan: which steps of one traced build are replayed alone, in what order,
and why the others are not (`buildfuzz run --check-steps`).

A step is worth auditing when its outputs reach a compared file: it wrote one, or wrote
an input of a step that did, and so on upstream (read backwards over the trace, in start
order). What it is compared on is exactly those outputs. A step is not replayable when
replayed alone it could not see what it saw: what `fuzzer.trace.writers` says of its
process tree (stdin from a pipe, the network, an input rewritten later), or it read a
device. Such a step is still audited through the smallest process inside it that wrote
its outputs and can be replayed alone (`debian/rules binary` read debian/control, which
a later step locks, while its autom4te did not), as localization replays it; with none,
it is listed with its reason and never counted as checked.

The order: the steps least recently audited first (never audited before all), so a
`--check-steps 10%` audit covers the whole build in about ten nights; among equals,
deliverables' steps before logs' and caches' (`fuzzer.explain.ranking`), then the
cheapest. The share is taken of the replayable steps; the budget may stop the audit
earlier, and every step left is counted with why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from fuzzer.explain import ranking
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.steps import BuildTrace, Step
from fuzzer.trace.restore import NOTHING_KEPT, Kept
from fuzzer.trace.writers import Mtimes, delivered_from, step_not_replayable, writer_of

# Devices a replay gives back just as the build had them; any other read under /dev is not
DEVICES_REPLAYED = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
NEVER = ""  # last_audit of a step no earlier campaign audited


@dataclass(frozen=True)
class Audited:
    """A step the audit may replay: a root candidate of one build against itself."""

    candidate: RootCandidate
    identity: str  # the same in every run of the build (fuzzer.trace.steps.Step.key)
    tier: ranking.Tier
    last_audit: str = NEVER  # when an earlier campaign last audited it (ISO time)

    @property
    def step(self) -> Step:
        return self.candidate.step


@dataclass(frozen=True)
class Unreplayable:
    step: Step
    identity: str
    reason: str


@dataclass(frozen=True)
class AuditPlan:
    chosen: tuple[Audited, ...]  # in the order to replay them
    deferred: tuple[Audited, ...]  # left for later nights by the share
    unreplayable: tuple[Unreplayable, ...]


def step_identity(step: Step) -> str:
    command, cwd, occurrence = step.key
    return f"{command} (in {cwd}) #{occurrence}"


def reaching_steps(trace: BuildTrace, compared: set[str]) -> list[tuple[Step, tuple[str, ...]]]:
    """Each step whose outputs reach a compared file, with those outputs, in start order."""
    reach = set(compared)
    reach |= {origin for path in compared if not trace.writers(path) if (origin := delivered_from(trace, path))}
    found = []
    for step in sorted(trace.steps, key=lambda s: s.start, reverse=True):
        outputs = tuple(sorted(p for p in step.outputs if p in reach))
        if outputs and not step.failed:
            found.append((step, outputs))
            reach |= step.inputs
    return found[::-1]


def not_replayable(trace: BuildTrace, step: Step, mtimes: Mtimes = {}, outputs: tuple[str, ...] = (),
                   kept: Kept = NOTHING_KEPT) -> str | None:
    """Why the step replayed alone would not see what it saw, nor the smallest process in it
    that wrote `outputs` (`kept`: what replays can put back of what the build removed);
    None: one of them would."""
    device = _device(trace, step.members)
    reason = f"it read the device {device}" if device else step_not_replayable(trace, step, mtimes, kept)
    if reason and outputs:
        writer = writer_of(trace, step, outputs, mtimes=mtimes, kept=kept)
        if not writer.is_step and not _device(trace, [p.index for p in writer.members]):
            return None
    return reason


def _device(trace: BuildTrace, members: Iterable[int]) -> str | None:
    return next((path for i in members for a in trace.processes[i].accesses
                 if a.kind == "read" and (path := a.path).startswith("/dev/") and path not in DEVICES_REPLAYED), None)


def plan(trace: BuildTrace, compared: set[str], share: float, named: tuple[str, ...],
         last_audits: dict[str, str], mtimes: Mtimes = {}, kept: Kept = NOTHING_KEPT) -> AuditPlan:
    """`share`: of the replayable steps, in (0, 1]; `named`: the user's --artifact globs;
    `last_audits`: step identity → when it was last audited; `mtimes`: the traced build's
    files' (`fuzzer.trace.writers.Mtimes`); `kept`: its removed files' kept bytes."""
    auditable, unreplayable = [], []
    for step, outputs in reaching_steps(trace, compared):
        identity = step_identity(step)
        reason = not_replayable(trace, step, mtimes, outputs, kept)
        if reason:
            unreplayable.append(Unreplayable(step, identity, reason))
            continue
        candidate = RootCandidate(ref=step, div=None, outputs=outputs, explains=(), input_differences=(),
                                  chain=(), failed=False)
        auditable.append(Audited(candidate, identity, ranking.tier_of(candidate, named, False),
                                 last_audits.get(identity, NEVER)))
    ordered = sorted(auditable, key=lambda a: (a.last_audit, a.tier, a.candidate.duration, a.step.start))
    count = math.ceil(share * len(ordered) - 1e-9)
    return AuditPlan(tuple(ordered[:count]), tuple(ordered[count:]), tuple(unreplayable))
