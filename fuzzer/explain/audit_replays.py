"""The step audit's replays, adaptive (`fuzzer.explain.audit_run` runs them in slots).

A first pass gives every planned step one replay alone, in plan order (deliverables first,
then the cheapest), compared with what the traced build left: a step whose replay differs
is a root and is classified at once, kind and stabilisers, classify's plain replays opening
with the audit's (the same conditions: counted once). A second pass tops the steps that
matched up to REPLAYS replays, cheapest first, while the budget lasts, less what the
localization that follows needs; a top-up stops at the first replay that differs. On a PyTorch-sized build the long stable steps are most of
the time and the varying generators a few seconds each: replaying every long step REPLAYS
times would spend the night on the steps least likely to matter. k replays identical to the
traced build bound the variation left below 1 - 0.05^(1/k) of replays at 95% (about 3/k);
each step's row says how many it got and that bound.
"""

from __future__ import annotations

import shlex
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from msgspec import structs

from fuzzer.execute.run import RunRecord
from fuzzer.execute.step_replay import REPLAYS, SPREAD_S, ReplayOutcome, Variation, joined, outputs_digest
from fuzzer.explain import audit
from fuzzer.explain.budget import Budget
from fuzzer.explain.classify import Context, Earlier, classify
from fuzzer.explain.writer import ReplayTargets
from fuzzer.model import AuditedStep, AuditResult, Culprit
from fuzzer.observe import Manifest
from fuzzer.stats import percent_above, upper_bound_zero
from fuzzer.trace.steps import BuildTrace

FIRST = 1  # replays each step gets in the first pass, when the traced build's output is known


@dataclass
class _State:
    replays: int = 0
    seconds: float = 0.0
    result: AuditResult = AuditResult.LEFT
    detail: str = ""
    audited: str = ""  # when its last replay ended
    digests: set[str] = field(default_factory=set)
    contents: dict[str, set[str | None]] = field(default_factory=dict)  # output → the digests its replays gave
    plain: ReplayOutcome | None = None  # its replays so far, one outcome: classify's first plain replays


class Steps:
    """Each planned step's replays so far; `first` and `more` are the passes' work, one
    step in one slot (`fuzzer.execute.replay_slots.in_slots`)."""

    def __init__(self, chosen: tuple[audit.Audited, ...], targets: ReplayTargets, record: RunRecord, logs: Path,
                 budget: Budget, reserve_s: float):
        self.targets, self.record, self.logs, self.budget, self.reserve_s = targets, record, logs, budget, reserve_s
        self.chosen = chosen
        self.classified: dict[str, Culprit] = {}
        self.why_left = ""  # why the first pass left steps unreplayed
        self._why_short = ""  # why the second left steps with fewer than REPLAYS
        self._states = {item.identity: _State() for item in chosen}
        self._lock = threading.Lock()

    def first(self, item: audit.Audited, context: Context) -> None:
        state = self._states[item.identity]
        traced = self._traced(item)
        times = FIRST if traced[0] else 2  # nothing to compare one replay with: two, with each other
        cost = times * self.targets.of(item.candidate).duration + (SPREAD_S if times > 1 else 0.0)
        with self._lock:
            if self.why_left or not self.budget.affords(cost):
                self.why_left = self.why_left or (
                    f"{self.budget.describe()} would not hold the next step's first replay "
                    f"(about {cost:.0f} s, {max(self.budget.left(), 0):.0f} s left)")
                state.detail = self.why_left
                return
        self._replay(item, context, state, times, traced)

    def topped_up(self) -> list[audit.Audited]:
        """What the second pass may add replays to: steps that matched, with fewer than REPLAYS."""
        return [i for i in self.chosen if (s := self._states[i.identity]).result == AuditResult.STABLE and s.replays < REPLAYS]

    def more(self, item: audit.Audited, context: Context) -> None:
        state = self._states[item.identity]
        times = REPLAYS - state.replays
        cost = times * self.targets.of(item.candidate).duration + SPREAD_S
        if not self.budget.affords(cost + self.reserve_s):
            with self._lock:
                self._why_short = self._why_short or (
                    f"{self.budget.describe()} would not hold their {times} more replays (about {cost:.0f} s for "
                    f"the cheapest left, {max(self.budget.left(), 0):.0f} s left"
                    + (f", {self.reserve_s:.0f} s of it kept for localization's traced builds)" if self.reserve_s
                       else ")"))
            return
        self._replay(item, context, state, times, self._traced(item))

    def short_note(self) -> tuple[str, ...]:
        short = [s for s in self._states.values() if s.result == AuditResult.STABLE and s.replays < REPLAYS]
        if not short:
            return ()
        return (f"step audit: {len(short)} stable step(s) got fewer than {REPLAYS} replays ({self._why_short}); "
                "each step's row says how many it got and the bound they give",)

    def unfinished(self) -> tuple[int, int, float]:
        """What the budget cut short: stable steps short of REPLAYS replays, chosen steps never
        replayed, and about what their missing replays take, serially, from each step's traced time."""
        short = unreplayed = 0
        seconds = 0.0
        for item in self.chosen:
            state = self._states[item.identity]
            missing = REPLAYS - state.replays
            if state.result == AuditResult.STABLE and missing > 0:
                short += 1
            elif state.result == AuditResult.LEFT:
                unreplayed += 1
            else:
                continue
            seconds += missing * self.targets.of(item.candidate).duration
        return short, unreplayed, round(seconds, 1)

    def row(self, item: audit.Audited) -> AuditedStep:
        state = self._states[item.identity]
        return row(item, self.targets, state.result, state.detail, state.replays, state.seconds, state.audited)

    def _traced(self, item: audit.Audited) -> tuple[dict[str, str] | None, str]:
        return traced_bytes(item, self.targets, self.record.manifest)

    def _replay(self, item: audit.Audited, context: Context, state: _State, times: int,
                traced_or_why: tuple[dict[str, str] | None, str]) -> None:
        traced_files, unknown = traced_or_why
        traced = outputs_digest(traced_files, traced_files.get) if traced_files is not None else None
        started = time.monotonic()
        # a screen: a replay that differs from the traced build or an earlier one decides it
        seen = tuple(state.plain.digests if state.plain else ()) + ((traced,) if traced else ())
        with context.replayer_for(item.candidate) as replayer:
            outcome = replayer.replay(Variation("plain"), times, seen)
        state.plain = joined([state.plain, outcome]) if state.plain else outcome
        state.replays += len(outcome.digests)
        state.digests |= set(outcome.digests)
        for files in outcome.contents:
            for path, digest in files.items():
                state.contents.setdefault(path, set()).add(digest)
        state.audited = _now()
        state.seconds += time.monotonic() - started
        if outcome.failed:
            state.result, state.detail = AuditResult.REPLAY_FAILED, f"replayed alone it {outcome.failure}"
            return
        k = state.replays
        distinct = state.digests | ({traced} if traced else set())
        if len(distinct) == 1:
            matched = ("the traced build's bytes" if traced
                       else f"the same bytes, compared with each other only ({unknown})")
            state.result = AuditResult.STABLE
            state.detail = (f"{k}/{k} replays alone gave {matched}: any variation left is below "
                            f"{percent_above(upper_bound_zero(k))} of replays (95%; k identical replays bound it "
                            "below about 3/k)")
            return
        against = " and the traced build" if traced else ""
        varied = _varied(state.contents, traced_files or {})
        state.result = AuditResult.VARIES
        state.detail = (f"{len(distinct)} distinct outputs in {k} replay{'s' if k > 1 else ''} alone{against}, "
                        f"from the traced build's inputs; {', '.join(varied)} differed")
        self._classify(item, context, state, varied)

    def _classify(self, item: audit.Audited, context: Context, state: _State, varied: list[str]) -> None:
        started = time.monotonic()
        earlier = Earlier(state.plain, state.seconds / max(state.replays, 1)) if state.plain else None
        culprit = structs.replace(classify(item.candidate, replace(context, earlier=earlier)), outputs=varied)
        evidence = (f"step audit: {state.detail} (replays of the audit's traced build at "
                    f"{self.record.perturbation.describe()}, their logs under {self.logs}), with no second build; "
                    f"{culprit.evidence}")
        self.classified[item.identity] = self.targets.annotate(structs.replace(culprit, evidence=evidence),
                                                               item.candidate)
        state.seconds += time.monotonic() - started


def _varied(contents: dict[str, set[str | None]], traced: dict[str, str]) -> list[str]:
    """The compared outputs whose bytes were not the same in every replay and the traced build."""
    return sorted(p for p, seen in contents.items() if len(seen | ({traced[p]} if p in traced else set())) > 1)


def traced_bytes(item: audit.Audited, targets: ReplayTargets,
                 manifest: Manifest | None) -> tuple[dict[str, str] | None, str]:
    """What the traced build wrote for the replays' compared outputs, each output's digest
    (the manifest's are `hash_file`'s, as the replays' are); else None and why the manifest
    does not hold the replayed step's bytes. A file another step also wrote, or that was
    there before the step wrote it, is not compared: a replay starts from the final tree, so
    one that appends (`echo x.o >> modules.order`) would differ from the build by design."""
    step, target = item.step, targets.of(item.candidate)
    members = {p.index for p in target.writer.members} if target.replays_process else set(step.members)
    digests = {}
    for path in target.call.compared:
        entry = manifest.entries.get(path) if manifest else None
        if entry is None or entry.kind != "file":
            return None, f"the traced build left no file {path}"
        if any(s is not step for s in targets.reference.writers(path)):
            return None, f"another step also wrote {path} in the traced build"
        if _last_writer(targets.reference, path) not in members:
            return None, f"another process of the step rewrote {path} in the traced build"
        if step.found(path) and (step.first_look(path) or 0.0) < step.writes[path]:
            return None, f"{path} was there before the step wrote it"
        digests[path] = entry.digest
    return digests, ""


def _last_writer(trace: BuildTrace, path: str) -> int | None:
    """The process that last wrote the file, of the steps that wrote it."""
    writes = [(a.last, i) for step in trace.writers(path) for i in step.members
              for a in trace.processes[i].accesses if a.kind == "write" and a.path == path]
    return max(writes, default=(0.0, None))[1]


def row(item: audit.Audited, targets: ReplayTargets, result: AuditResult, detail: str, replays: int = 0,
        seconds: float = 0.0, audited: str = "") -> AuditedStep:
    step, target = item.step, targets.of(item.candidate)
    call = target.call
    return AuditedStep(
        identity=item.identity, command=step.command, cwd=step.cwd, outputs=list(item.candidate.outputs),
        result=result, detail=detail, replays=replays, seconds=round(seconds, 3),  # a failed replay's count too
        last_audit=item.last_audit, audited=audited if result.replayed else "",
        replay=f"cd {shlex.quote(call.cwd)} && {shlex.join(call.argv)}", step_s=round(target.duration, 3),
    )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
