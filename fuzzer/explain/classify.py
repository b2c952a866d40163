"""Kinds of cause, decided by evidence (docs/architecture.md, "Explain: localization"):

- different inputs observed, with a concurrent writer on the timeline → race;
- a file it read is written by a step not ordered with it (a hazard: read-modify-write
  of shared state), even when the final contents match → race;
- a replay that exits differently from the traced step → no kind ("unknown"), and the
  report quotes the replay's failure;
- replayed alone on identical inputs it varies → intrinsic (then: what stabilises it);
- stable alone, but its output follows the CPU set or the job count → parallelism-level;
- stable alone, same input contents, yet different output → order when its reads came in
  another order, or when replays with its inputs' mtimes (modes) moved change its output
  (`metadata`); else not enough evidence.

Known noise (a log differing only in temporary file names, pids or dates) is said in one
line after the plain replays (whether they vary or not: the builds' variants are the
evidence), with no stabiliser search. A step whose first replays would take more than its
share of the localization budget is explained from the traces alone, and says so.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from msgspec import structs

from fuzzer.execute.run import RunRecord
from fuzzer.explain import metadata, stabilizers
from fuzzer.explain.budget import UNLIMITED, Budget
from fuzzer.explain.lines import replays as line_search
from fuzzer.explain.noise import Noise
from fuzzer.execute.replay_spread import Replayer
from fuzzer.execute.step_replay import REPLAYS, SPREAD_S, ReplayOutcome, Variation, joined
from fuzzer.model import Culprit, Hazard, KeyEvidence, Kind, Unfinished
from fuzzer.parallelism import parallel_env
from fuzzer.trace.graph import ONE_RUN, RACE_EVIDENCE, READ_ORDER, RootCandidate
from fuzzer.trace.hazards import DUPLICATE, MKDIR_RACE, WRITE_WRITE
from fuzzer.trace.differences import InputDifference, workspace_inputs
from fuzzer.trace.steps import StepKey

AXIS_REPLAYS = 2
AXIS_TRIALS = 2  # at most: the CPU set, then the job count


@dataclass(frozen=True)
class Earlier:
    """Plain replays the step audit already made of the candidate, in the same conditions as
    classify's (its traced argv, cwd and environment, alone, on the same tree): the same
    evidence, so they open classify's plain replays and are counted once."""

    outcome: ReplayOutcome
    per_replay_s: float


@dataclass(frozen=True)
class Context:
    """What classification needs besides the candidate itself."""

    reference: RunRecord
    divergent: RunRecord
    replayer_for: Callable[[RootCandidate], Replayer]  # a replayer of the candidate's reference step
    hazards: tuple[Hazard, ...] = ()  # unordered conflicts seen in the traces
    budget: Budget = UNLIMITED
    noise: Mapping[StepKey, Noise] = field(default_factory=dict)  # roots whose outputs are known noise
    stabilizers: tuple[str, ...] = ()  # the candidates the user chose (empty: every one)
    # what one replay of the candidate costs: the writer process's run time when that is what
    # replays run (fuzzer.explain.writer), else the step's
    replay_seconds: Callable[[RootCandidate], float] | None = None
    earlier: Earlier | None = None  # the step audit's plain replays of this candidate (one candidate's context)
    shown_in: int | None = None  # the campaign's run whose conditions `divergent` built in (a traced rerun's original)


def classify(candidate: RootCandidate, context: Context) -> Culprit:
    step = candidate.step
    race = [d for d in candidate.input_differences if d.how in RACE_EVIDENCE or (d.how == ONE_RUN and d.other)]
    if race:
        shared = _shared_state(candidate, context.hazards)
        other = race[0].other or (_other(shared, step.command) if shared is not None else None)
        return _culprit(candidate, Kind.RACE, evidence=_race_evidence(candidate, race), other=other,
                        key=KeyEvidence(file=race[0].file, run=context.shown_in))
    shared = _shared_state(candidate, context.hazards)
    if shared is not None:
        failed = f"it failed with exit {step.exit_code} in the divergent run; " if candidate.failed else ""
        return _culprit(candidate, Kind.RACE, other=_other(shared, step.command), evidence=(
            f"{failed}it depends on {shared.file}, which a step not ordered with it changes ({shared.type}: "
            f"{shared.detail}; {shared.evidence}): what it found depended on which ran first"),
            key=KeyEvidence(file=shared.file, run=context.shown_in))
    if candidate.failed:
        # no evidence of a race, and replaying a failing step tells nothing: say so
        return _culprit(candidate, Kind.UNKNOWN, evidence=_failure_evidence(candidate))
    noise = context.noise.get(step.key)
    first_replays_s = _plain_wanted(context) * _replay_seconds(candidate, context) + SPREAD_S
    if not context.budget.affords_replays(first_replays_s):
        culprit = _from_traces(candidate, noise, _too_costly(first_replays_s, context.budget))
        return culprit if noise is not None else _unfinished(culprit, Unfinished.REPLAYS, first_replays_s)
    with context.replayer_for(candidate) as replayer:
        return _by_replay(candidate, replayer, context, noise)


def _replay_seconds(candidate: RootCandidate, context: Context) -> float:
    return context.replay_seconds(candidate) if context.replay_seconds else candidate.duration


def _plain_wanted(context: Context) -> int:
    """The plain replays still to make: REPLAYS less the audit's, none once those vary."""
    earlier = context.earlier.outcome if context.earlier else None
    if earlier is None:
        return REPLAYS
    return 0 if earlier.varies else max(REPLAYS - len(earlier.digests), 0)


def _by_replay(candidate: RootCandidate, replayer: Replayer, context: Context, noise: Noise | None) -> Culprit:
    """The plain replays are a screen: two different outputs decide "it varies", so they
    stop there (`step_replay.decided`); only a step that matches gets all REPLAYS."""
    earlier = context.earlier
    started = time.monotonic()
    new = replayer.replay(Variation("plain"), _plain_wanted(context), seen=earlier.outcome.digests if earlier else ())
    per_replay_s = (time.monotonic() - started) / len(new.digests) if new.digests else \
        (earlier.per_replay_s if earlier else 0.0)
    plain = joined([earlier.outcome, new]) if earlier else new
    if plain.failed:
        return _culprit(candidate, Kind.UNKNOWN, evidence=(
            f"replay failed: replayed alone with its traced argv, cwd and environment it {plain.failure}; "
            "no kind is drawn from a replay that did not run as the traced step did"))
    if noise is not None:
        return _noise(candidate, noise, _replayed_noise(plain))
    if plain.varies:
        return _intrinsic(candidate, replayer, plain, context, per_replay_s)
    return _stable_alone(candidate, replayer, plain.digests[0], context, per_replay_s)


def _stable_alone(candidate: RootCandidate, replayer: Replayer, digest: str, context: Context,
                  per_replay_s: float) -> Culprit:
    """Stable replayed alone: its output follows the CPU set or the job count, or the order
    or timing of its inputs, or the evidence is too thin to say."""
    if not context.budget.affords(AXIS_TRIALS * AXIS_REPLAYS * per_replay_s):
        return _unfinished(_culprit(candidate, Kind.UNKNOWN, evidence=(
            f"replayed alone it is stable ({REPLAYS}/{REPLAYS}); {context.budget.describe()} ran out before its "
            "CPU set and job count were varied: no kind drawn")), Unfinished.AXIS_TRIALS,
            AXIS_TRIALS * AXIS_REPLAYS * per_replay_s)
    axis = _tracked_axis(replayer, digest, context)
    if axis:
        name, value = axis
        return _culprit(candidate, Kind.PARALLELISM_LEVEL, axis=name, evidence=(
            f"replayed alone it is stable ({REPLAYS}/{REPLAYS} identical) and its output changes when only "
            f"the {name} changes ({value}): a deterministic function of the {name}"))
    return _order_or_metadata(candidate, replayer, digest, context, per_replay_s)


def _failure_evidence(candidate: RootCandidate) -> str:
    """What a step's failure in the divergent run is compared with: the same step (command,
    cwd and occurrence, temporary names blanked) in the reference, and nothing else: a check
    failing in both is no root at all (trace/graph.py)."""
    step, same = candidate.step, candidate.ref  # the divergent run's step, where it failed
    if same is None:
        return (f"failed with exit {step.exit_code} in the divergent run; the reference ran no step with its command, "
                "directory and occurrence, so there is no run of it to compare with: not enough evidence to name a kind")
    return (f"failed with exit {step.exit_code} in the divergent run and succeeded in the reference, with no input "
            "difference seen in the trace (a resource limit, a flaky tool, or a race through something not traced)")


def _shared_state(candidate: RootCandidate, hazards: tuple[Hazard, ...]) -> Hazard | None:
    """An unordered conflict that touches what the step depended on: a file it read that
    another step writes, a file it read and rewrote that another step rewrites (a counter,
    a cache), a directory it wrote into that another step creates (when it failed: a step
    that wrote into the directory and succeeded found it there, so the race did not make its
    bytes; fossil's `mkversion > bld/VERSION.h` differs by the clock, not by `mkdir bld`), or
    a file it wrote while another run of its own recipe wrote it too."""
    step = candidate.replayed
    steps = [s for s in (candidate.ref, candidate.div) if s is not None]
    read = {p for s in steps for p in s.inputs}
    wrote = {p for s in steps for p in s.writes}
    wrote_into = {os.path.dirname(p) + "/" for s in steps
                  for p in (*s.writes, *(q for q, probe in s.probes.items() if not probe.found))}
    for hazard in hazards:
        if hazard.type == DUPLICATE and candidate.ref is None and (read | wrote).intersection(hazard.files):
            return hazard  # an extra run, which the reference did not make, of a line touching its files
        if step.command not in hazard.steps:
            continue
        if hazard.type in (WRITE_WRITE, DUPLICATE) and read.intersection(hazard.files or [hazard.file]):
            return hazard
        if hazard.type == DUPLICATE and wrote.intersection(hazard.files or [hazard.file]):
            return hazard
        victim = step.command != hazard.writer
        missed_directory = hazard.type == MKDIR_RACE and candidate.failed and hazard.file in wrote_into
        if victim and (missed_directory or hazard.type != MKDIR_RACE and hazard.file in read):
            return hazard
    return None


def _other(hazard: Hazard, command: str) -> str | None:
    """The step whose output `command` missed or raced with: the hazard's writer (the step
    that creates the directory, writes the file), or its reader when `command` is the
    writer; never merely another step the hazard names (a sibling writing into the same
    directory). A recipe running several times at once raced another run of itself."""
    if hazard.type == DUPLICATE:
        return command
    return hazard.writer if command != hazard.writer else hazard.reader


def _from_traces(candidate: RootCandidate, noise: Noise | None, why: str) -> Culprit:
    """No replay: the diff of its outputs may still say what it is."""
    if noise is not None:
        return _noise(candidate, noise, why)
    return _culprit(candidate, Kind.UNKNOWN, evidence=(
        f"explained from the traces alone: its inputs were identical in both builds and its output differs; {why}, "
        "so no kind is drawn (--localize-budget gives localization more time)"))


def _too_costly(seconds: float, budget: Budget) -> str:
    return (f"not replayed: its first {REPLAYS} replays would take about {seconds:.0f} s, more than its share of the "
            f"{max(budget.left(), 0):.0f} s left of {budget.describe()}")


def _noise(candidate: RootCandidate, noise: Noise, how: str) -> Culprit:
    """Known noise: one line, no stabiliser search."""
    return _culprit(candidate, Kind.INTRINSIC, evidence=f"intrinsic: {noise.describe()}; {noise.evidence()}; {how}")


def _replayed_noise(plain: ReplayOutcome) -> str:
    """What the replays add to known noise. A stable replay does not undo it: the variants
    the builds left differ only in those names (a CMake configure replayed over its own cache
    skips the checks that draw them)."""
    if plain.varies:
        return f"replayed alone it gave {plain.distinct} distinct outputs in {len(plain.digests)}"
    return (f"replayed alone it gave one output in {len(plain.digests)} replays; the builds' own variants are what differ "
            "only in those names")


def _intrinsic(candidate: RootCandidate, replayer: Replayer, plain: ReplayOutcome, context: Context,
               per_replay_s: float) -> Culprit:
    search = stabilizers.search(replayer, context.stabilizers, context.budget, per_replay_s)
    shared = (f" ({len(context.earlier.outcome.digests)} of them the step audit's, made in the same conditions and "
              "counted once)" if context.earlier else "")
    evidence = (f"its inputs are identical in both builds; replayed alone {len(plain.digests)} times{shared} with its "
                f"traced argv, cwd and environment it gave {plain.distinct} distinct outputs (the replays stop at the "
                f"first two that differ); {search.describe()}")
    varied = tuple(dict.fromkeys(name for found in (search.stabilizers, *search.alternatives) for name in found))
    culprit = _culprit(candidate, Kind.INTRINSIC, evidence=evidence, stabilized_by=list(search.stabilizers),
                       alternatives=[list(a) for a in search.alternatives],
                       key=KeyEvidence(replays=len(plain.digests), distinct=plain.distinct))
    culprit = structs.replace(culprit, line=line_search.search(replayer, varied, context.budget, per_replay_s))
    if search.left_replays:
        return _unfinished(culprit, Unfinished.STABILISER_SEARCH, search.left_replays * per_replay_s)
    return culprit


def _tracked_axis(replayer: Replayer, stable_digest: str, context: Context) -> tuple[str, str] | None:
    """Replay with only the CPU set, then only the job count, of the divergent run."""
    ref, div = context.reference.perturbation, context.divergent.perturbation
    trials = []
    if div.cpus != ref.cpus:
        trials.append(("cpus", Variation("cpus", cpus=div.cpus), f"{ref.ncpus} → {div.ncpus} CPUs"))
    alternative_cpus = (ref.cpus[0],)
    if len(ref.cpus) > 1 and div.cpus == ref.cpus:
        trials.append(("cpus", Variation("cpus", cpus=alternative_cpus), f"{ref.ncpus} → 1 CPU"))
    jobs = div.jobs if div.jobs != ref.jobs else max(ref.jobs * 4, 8)
    trials.append(("jobs", Variation("jobs", env=tuple(parallel_env(jobs).items())), f"-j{ref.jobs} → -j{jobs}"))
    for name, variation, change in trials:
        outcome = replayer.replay(variation, AXIS_REPLAYS)
        if outcome.stable and outcome.digests[0] != stable_digest:
            return name, change
    return None


def _race_evidence(candidate: RootCandidate, differences: Sequence[InputDifference]) -> str:
    lines = []
    for d in differences[:3]:
        text = d.detail or d.how
        other = f" (concurrent step: {d.other})" if d.other and d.other not in text else ""
        lines.append(f"{d.file}: {text}{other}")
    if len(differences) > 3:
        lines.append(f"and {len(differences) - 3} more")
    failed = f"it failed with exit {candidate.step.exit_code} in the divergent run; " if candidate.failed else ""
    return failed + "it observed different inputs in the two builds: " + "; ".join(lines)


def _order_or_metadata(candidate: RootCandidate, replayer: Replayer, digest: str, context: Context,
                       per_replay_s: float) -> Culprit:
    """Stable alone on identical contents: its reads came in another order (seen in the
    traces), or its output follows its inputs' metadata (shown by replays that move them),
    or the evidence is too thin to say."""
    stable = f"replayed alone it is stable ({REPLAYS}/{REPLAYS}) on identical input contents"
    order = [d for d in candidate.input_differences if d.how == READ_ORDER]
    if order:
        return _culprit(candidate, Kind.ORDER, evidence=(
            f"{stable}; it read its inputs in a different order ({order[0].detail or order[0].file})"),
            key=KeyEvidence(file=order[0].file, run=context.shown_in, reference_order=list(order[0].ref_order),
                            run_order=list(order[0].div_order)))
    found = _differed_metadata(candidate, context)
    planned = metadata.experiments(found)
    needed_s = len(planned) * metadata.EXPERIMENT_REPLAYS * per_replay_s
    if planned and not context.budget.affords(needed_s):
        return _unfinished(_culprit(candidate, Kind.UNKNOWN, evidence=(
            f"{stable}, read in the same order; {found.describe()}, but {context.budget.describe()} ran out before "
            "they were moved in a replay: no kind drawn")), Unfinished.METADATA_TRIALS, needed_s)
    for experiment in planned:
        shown = metadata.follows(replayer, digest, found, experiment)
        if shown:
            return _culprit(candidate, Kind.ORDER, evidence=f"{stable}, read in the same order; {found.describe()}; {shown}")
    tried = f"; moved in replays ({'; '.join(e.what + ' ' + e.how for e in planned)}), they left its output as it was" \
        if planned else ""
    return _culprit(candidate, Kind.UNKNOWN, evidence=(
        f"{stable}, read in the same order; {found.describe()}{tried}: not enough evidence to name a kind"))


def _differed_metadata(candidate: RootCandidate, context: Context) -> metadata.Differed:
    ref, div = context.reference.manifest, context.divergent.manifest
    if ref is None or div is None:
        return metadata.Differed((), (), 0.0, False)
    written = {p for s in (candidate.ref, candidate.div) if s is not None for p in (*s.writes, *s.deletes)}
    umask = any(name == "umask" for r in (context.reference, context.divergent) for name, _ in r.perturbation.variations)
    return metadata.differed(workspace_inputs(candidate.ref, candidate.div), written, ref, div, umask)


def _unfinished(culprit: Culprit, what: Unfinished, seconds: float) -> Culprit:
    """A claim the budget cut short: what was left undone and about what it would take."""
    return structs.replace(culprit, unfinished=what, unfinished_s=round(seconds, 1))


def _culprit(candidate: RootCandidate, kind: Kind, *, evidence: str, axis: str | None = None,
             stabilized_by: list[str] | None = None, alternatives: list[list[str]] | None = None,
             other: str | None = None, key: KeyEvidence | None = None) -> Culprit:
    step = candidate.step
    outputs = list(candidate.outputs)
    writer = list(step.leaf.get(outputs[0], ())) if outputs else []
    chain = " ← ".join(candidate.chain) if len(candidate.chain) > 1 else ""
    full = evidence + (f"\nchain: {chain}" if chain else "")
    return Culprit(
        command=step.command,
        argv=list(step.argv),
        cwd=step.cwd,
        outputs=outputs,
        kind=kind,
        axis=axis,
        stabilized_by=stabilized_by or [],
        stabilizer_alternatives=alternatives or [],
        evidence=full,
        chain=list(candidate.chain),
        writer=writer,
        other_step=other,
        key=key,
    )
