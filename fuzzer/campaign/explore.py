"""The explore phase: the reference build, then the schedule (remembered perturbations
and guided targets in front of the seeded runs), `executor.slots` builds at a time, each
stored as it ends and stopped inside the budget."""

from __future__ import annotations

import os
import shlex
import statistics
from pathlib import Path
from typing import Mapping

from fuzzer import axes, guided, hold, memory
from fuzzer.campaign import confidence
from fuzzer.campaign.state import Campaign, Events
from fuzzer.config import FuzzConfig
from fuzzer.errors import UsageError
from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.step_replay import SPREAD_S
from fuzzer.explain.traced import TRACE_SLOWDOWN
from fuzzer.model import ExitReason, Reason, available_cpus
from fuzzer.plan import Planned, Space, explore_plan
from fuzzer.tools import make, strace
from fuzzer.trace import makes
from fuzzer.trace.steps import BuildTrace, load_trace


def explore(campaign: Campaign, executor: Executor, events: Events) -> None:
    """The reference first, alone (every later run is compared with it and timed by it),
    then the schedule, `executor.slots` builds at a time, each stored as it ends. However
    it stops, the report says which --vary axis no run varied."""
    try:
        _explore(campaign, executor, events)
    except KeyboardInterrupt:
        campaign.exit_reason = ExitReason.INTERRUPTED  # for the note below: why the axis had no run
        raise
    finally:
        varied = axes.variation_axes(campaign.config.axes)
        campaign.notes += axes.not_run(varied, [r.perturbation for r in campaign.runs], campaign.exit_reason)


SCANNED = 2  # the reference and the hazard scan: the runs made before the plan is finished


def _explore(campaign: Campaign, executor: Executor, events: Events) -> None:
    config = campaign.config
    campaign.notes += axes.unavailable(config.axes) + axes.which_make(config.axes)  # said once, in the report
    varied = axes.variation_axes(config.axes)
    plan = _plan(campaign, varied)
    if not campaign.runs:
        reference = executor.run(_request(plan, 0, config.timeout))
        if not _finish_run(campaign, executor, events, reference):
            return
    if _guided(campaign) and len(plan) > 1:
        # the first run after the reference is traced, alone; where a traced build would
        # not fit the budget, the drawn runs go on untraced (no held runs) rather than none
        if len(campaign.runs) == 1 and _within_budget(campaign, slowdown=TRACE_SLOWDOWN):
            traced = executor.run(_request(plan, 1, campaign.timeout_after_reference(), trace=True))
            if not _finish_run(campaign, executor, events, traced):
                return
        elif len(campaign.runs) == 1:
            campaign.notes.append(f"hazard scan skipped: a traced build (up to {TRACE_SLOWDOWN:g} builds' time) "
                                  "would not fit the budget; no held runs (a larger --budget adds them)")
        trace = _scan_trace(campaign)
        if trace is not None:
            ran_makes = makes.make_programs(trace, config.source)  # reads scripts' #! lines: once
            campaign.unreached.update(_shuffle_unreached(config, ran_makes))
            plan = _with_targets(campaign, _without_unread(campaign, plan, varied, programs_ran(trace, ran_makes)),
                                 trace)
        elif len(campaign.runs) == 1 or not campaign.runs[1].trace_path:  # no scan: the first drawn run shuffles
            plan = _plan(campaign, varied, scan=False)
    pending: dict = {}
    upcoming = iter(range(len(campaign.runs), len(plan)))
    stop = ExitReason.UNSET
    while True:
        while not stop and len(pending) < executor.slots:
            index = next(upcoming, None)
            stop = _stop_before(campaign, index) or confidence.stop_before(campaign, index)
            if not stop and index is not None:  # _stop_before ends the plan at None
                # a held run is traced: the order it made is evidence for hazards even where its
                # output cannot show it (a lock file gone by the end, a build differing anyway)
                request = _request(plan, index, campaign.timeout_after_reference(),
                                   trace=plan[index].reason is Reason.TARGET)
                pending[executor.submit(request)] = request
        if not pending:
            break
        done = next(iter(executor.as_completed(pending)))
        del pending[done]
        if not _finish_run(campaign, executor, events, done.result()):
            stop = stop or campaign.exit_reason
    campaign.exit_reason = campaign.exit_reason or stop
    campaign.notes += confidence.notes(campaign)


def _guided(campaign: Campaign) -> bool:
    """Targeted runs need the hold axis, a trace, and localization (their hazards are findings)."""
    config = campaign.config
    return "hold" in config.axes and config.localize and strace.STRACE.problem() is None and hold.problem() is None


def _plan(campaign: Campaign, varied: tuple[axes.Axis, ...], scan: bool = True) -> list[Planned]:
    """The schedule over `varied`, what diverged before first, cut to the runs planned. Its
    first drawn run is the hazard scan where guided runs are made (and `scan`: not skipped)."""
    config = campaign.config
    candidates = axes.planned(_space(config), campaign.seed, varied, scan=scan and _guided(campaign))
    candidates = memory.remembered_first(campaign.subject(), not campaign.runs, candidates, config.runs,
                                         _space(config), varied)
    return explore_plan(candidates, confidence.planned(config), axes.promised(varied))


def _scan_trace(campaign: Campaign) -> BuildTrace | None:
    """The hazard scan's trace (run 1), where it was made and kept."""
    traced = campaign.runs[1] if len(campaign.runs) > 1 else None
    if traced is None or not traced.trace_path or not Path(traced.trace_path).exists():
        return None
    return load_trace(traced.trace_path, str(campaign.spec.workspace.path))


def _without_unread(campaign: Campaign, plan: list[Planned], varied: tuple[axes.Axis, ...],
                    ran: frozenset[str]) -> list[Planned]:
    """The plan without the axes none of whose readers the scan saw run (no make ran: no
    shuffle), planned again so the other axes keep their share; the reference and the scan,
    made already, stay (targets are merged in after, as on --resume)."""
    campaign.unread = axes.unread(varied, ran)
    if not campaign.unread:
        return plan
    read = tuple(a for a in varied if a.name not in campaign.unread)
    return plan[:SCANNED] + _plan(campaign, read)[SCANNED:]


def _with_targets(campaign: Campaign, plan: list[Planned], trace: BuildTrace) -> list[Planned]:
    """The plan with the traced run's targets right after it (the same ones on --resume)."""
    traced = campaign.runs[1]
    found = guided.targets(trace, traced.perturbation, min(guided.MAX_TARGETS, max(0, campaign.config.runs - 3)))
    if not found:
        return plan
    promised = axes.promised(axes.variation_axes(campaign.config.axes))
    guided_plan = guided.merged(plan, found, traced.perturbation, len(plan), promised)
    campaign.targets, campaign.control_index = guided_plan.targets, guided_plan.control_index
    return guided_plan.plan


def programs_ran(trace: BuildTrace, ran_makes: Mapping[str, object]) -> frozenset[str]:
    """The names of the programs the traced build ran, with its makes (`makes.make_programs`:
    the make that ran a script by its `#!` line, debian/rules, which the trace shows as the
    script's exec alone)."""
    return frozenset(os.path.basename(argv[0]) for proc in trace.processes for argv in proc.execs if argv) | \
        frozenset(os.path.basename(program) for program in ran_makes)


def _shuffle_unreached(config: FuzzConfig, ran_makes: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """The shuffle axis's problem when the traced build ran a make with no --shuffle: such a
    make drops it from MAKEFLAGS for all it runs (a `debian/rules` run by its `#!/usr/bin/make`
    line, on a system whose make is 4.3, ran every make of the package's build so), so no
    shuffled run reordered those makes, and their seeds are no trials. (A build that ran no
    make at all draws no shuffle run: `_without_unread`.)"""
    if "shuffle" not in config.axes or make.shuffle_problem():
        return {}
    older = [(found, argv) for path, argv in ran_makes.items()
             if (found := make.at(path)) is not None and found.version < make.SHUFFLE_SINCE]
    if not older:
        return {}
    found, argv = older[0]
    return {"shuffle": f"the traced build ran {found.describe()} (`{shlex.join(argv)}`), which has no --shuffle "
                       "and drops it from MAKEFLAGS for what it runs: those makes were not shuffled"}


def _request(plan: list[Planned], index: int, timeout: float | None, trace: bool = False) -> RunRequest:
    return RunRequest(index, plan[index].perturbation, timeout=timeout, trace=trace, reason=plan[index].reason.value)


def _space(config: FuzzConfig) -> Space:
    return Space(
        jobs=config.jobs if "jobs" in config.axes else (config.jobs[0], config.jobs[0]),
        cpus=available_cpus(),
        vary_cpus="cpus" in config.axes,
        vary_jitter="jitter" in config.axes,
    )


def _stop_before(campaign: Campaign, index: int | None) -> ExitReason:
    """Why no further run starts (UNSET to go on)."""
    if index is None:
        return ExitReason.ALL_RUNS_DONE
    if not _within_budget(campaign):
        return ExitReason.BUDGET_SPENT
    return ExitReason.UNSET


def _finish_run(campaign: Campaign, executor: Executor, events: Events, record: RunRecord) -> bool:
    """Store the run, keep its evidence, tell the user; False when the campaign must stop."""
    # kept first: a .buildinfo's variant is judged from its kept copy when the run's digest is taken
    campaign.evidence.keep(executor, record, campaign.runs[0].manifest if campaign.runs else record.manifest)
    campaign.add_run(record)
    campaign.store.save_run(campaign.id, record)
    events.run_finished(record, campaign.group_of(record), confidence.planned(campaign.config))
    if record.index == 0 and not record.ok:
        campaign.exit_reason = ExitReason.REFERENCE_FAILED
        return False
    if record.index == 0:
        _check_artifact_globs(campaign, record)
    if campaign.config.stop_on_first and campaign.diverged():
        campaign.exit_reason = ExitReason.FIRST_DIVERGENCE
        return False
    return True


def _within_budget(campaign: Campaign, slowdown: float = 1.0) -> bool:
    """Start another run (`slowdown` times a build: tracing costs more) only if it is
    expected to end inside the budget, keeping room for what follows: a traced hazard
    scan (~1.5 builds), or once the builds diverged, localization (two traced builds, step
    replays; ablation runs only if time is left)."""
    walls = [r.wall_s for r in campaign.runs] or [0.0]
    typical = max(statistics.median(walls), walls[-1])
    # step replays are paced over SPREAD_S (twice: plain, then stabilisers) whatever the build's length
    localize = 4 * typical + 2 * SPREAD_S if campaign.diverged() else 1.5 * typical
    reserve = localize if campaign.config.localize else 0.0
    return typical * 1.2 * slowdown + reserve <= campaign.seconds_left()


def _check_artifact_globs(campaign: Campaign, reference: RunRecord) -> None:
    left = reference.built  # the reference succeeded
    for glob in campaign.config.artifacts:
        if not left.select([glob]).entries:
            raise UsageError(f"--artifact {glob!r} matched no file the reference build left ({len(left.entries)} files)")
