"""explain: from traced runs, the step that introduced a divergence, its kind, and what
stabilises it (docs/architecture.md, "Explain: localization").

When the step audit classified roots and every file the runs differ in leads back to them
in the audit's traced reference, those roots are the localization: no divergent build is
traced and nothing is replayed again. Otherwise, phases: trace divergent reruns and the
reference → find root divergent steps and the hazards over every trace → rank the roots (`ranking`: deliverables before logs and
caches, known noise last, the cheapest first) → classify them in that order (trace
evidence first, then faithful replays alone) while the localization budget lasts
(`budget`), naming the roots left unexplained → shrink the divergent perturbation to a
minimal reproducer. When no traced rerun diverges, a failed run's log is read against
the reference trace. A reproducible campaign still gets one traced parallel run, for
latent hazards.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Callable, Iterable, Mapping, Sequence

from msgspec import structs

from fuzzer.compare import Comparison
from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunRecord
from fuzzer.explain import ranking, stabilizers, untraced
from fuzzer.explain.ablation import Reproducer, any_rebuild, minimal_reproducer
from fuzzer.explain.audit_run import AuditOutcome, taken_over
from fuzzer.explain.budget import Budget
from fuzzer.explain.build_path import traced_bytes
from fuzzer.explain.builds import Builds
from fuzzer.explain.classify import Context, classify
from fuzzer.explain.from_log import Declared, explain_failure, read_log
from fuzzer.explain.manifest import mark_manifest
from fuzzer.execute.logs import error_lines
from fuzzer.explain.noise import KeptVariants, known_noise
from fuzzer.explain.shared_cause import one_per_hazard, one_per_step
from fuzzer.execute.replay_slots import Slots, in_slots, replay_slots
from fuzzer.execute.replay_spread import Replayer
from fuzzer.explain.traced import TracedPair, campaign_traced, original_run, run_label, trace_pair, trace_reference
from fuzzer.explain.untraced import differing_from, runs_text
from fuzzer.explain.writer import ReplayTargets, kept_files, mtimes_of, provenance
from fuzzer.model import AuditSummary, Culprit, Hazard, Kind, NoStep, RunKind, UnnamedFile
from fuzzer.observe import Manifest
from fuzzer.plan import Perturbation
from fuzzer.tools import strace
from fuzzer.trace import declared
from fuzzer.trace import hazards as trace_hazards
from fuzzer.trace.graph import RootCandidate, find_roots
from fuzzer.trace.outside import outside_note
from fuzzer.trace.prerequisites import declared_hazards, with_missing_edges, with_rules
from fuzzer.trace.steps import BuildTrace, load_trace, written_by_drivers

LISTED = 5  # roots left unexplained named in the note; the rest are counted


@dataclass(frozen=True)
class Localization:
    culprits: tuple[Culprit, ...] = ()
    hazards: tuple[Hazard, ...] = ()
    notes: tuple[str, ...] = ()
    minimal_reproducer: str | None = None
    traced: bool = False
    audit: AuditSummary | None = None  # the step audit (--check-steps; fuzzer/explain/audit_run.py)
    budget_s: float = 0.0  # the localization budget (inf: none), and the replays at once it was spent in
    slots: int = 1
    unexplained_s: tuple[float, ...] = ()  # each root left unexplained: about what explaining it takes
    unnamed: tuple[UnnamedFile, ...] = ()  # files the runs differed in that no culprit is named for, and why


def localize(builds: Builds, comparison: Comparison, executor: Executor, budget: Budget, evidence: KeptVariants,
             audit: AuditOutcome | None = None) -> Localization:
    """`budget`: the localization's (`budget.localization_budget`), which `builds.deadline`
    holds its tracing and shrinking runs to as well; `evidence`: the variants kept of the
    runs' files (`known_noise` reads them); `audit`: the step audit, whose classified roots
    are taken over rather than replayed again, and whose traced reference serves as this
    one's: its tree, when the audit set it aside, serves the replays of the other roots."""
    unusable = strace.STRACE.problem()
    if unusable:
        return Localization(notes=(f"step localization disabled: {unusable}; results are artifact-level only",))
    explained = _from_audit(builds, comparison, executor, audit)
    if explained is not None:
        return explained
    kept_tree = audit.kept_tree if audit is not None and audit.reference is not None else None
    borrowed = audit.reference if audit is not None and (audit.classified or kept_tree is not None) else None
    pair = trace_pair(builds, comparison, executor, borrowed)  # the divergent builds, at the campaign's path
    # the reference's tree is this workspace's own, or the audit's put back after those builds
    here = borrowed is None or (kept_tree is not None and executor.reuse_tree(borrowed, kept_tree))
    audited = audit.classified if audit is not None else {}
    found = _localize(builds, comparison, executor, budget, evidence, pair, audited, borrowed is not None, here)
    if found is None:  # a root the audit did not classify is replayed here, on this workspace's reference tree
        pair = replace(pair, reference=trace_reference(builds, executor))
        found = _localize(builds, comparison, executor, budget, evidence, pair, audited, False, True)
    return found


def _localize(builds: Builds, comparison: Comparison, executor: Executor, budget: Budget, evidence: KeptVariants,
              pair: TracedPair, audited: Mapping[str, Culprit], borrowed: bool, tree_here: bool) -> Localization | None:
    """`borrowed`: the reference is the audit's; None: its tree is not `tree_here` (the
    audit did not set it aside) and a root needs replays."""
    tree, parent = builds.tree, builds.parent_outputs
    reference_trace = load_trace(pair.reference.trace_file, tree, parent)
    outside = outside_note(reference_trace, builds.compared_places)
    attempts = [(a, load_trace(a.trace_file, tree, parent)) for a in (*pair.attempts, *campaign_traced(builds))]
    reference_label = "step audit's traced reference" if borrowed else "traced reference"
    labels = trace_hazards.distinct_labels([reference_label, *(run_label(a) for a, _ in attempts)])
    graph = declared.declared_graph(builds.command, tree, reference_trace)
    own = {label: a.index for label, (a, _) in zip(labels[1:], attempts) if a.kind is RunKind.EXPLORE}
    found = declared_hazards(trace_hazards.find_hazards([reference_trace, *(t for _, t in attempts)], labels, graph, own),
                             graph, reference_trace, labels[0], zip(labels[1:], (t for _, t in attempts)), tree)
    failures = {i: error_lines(read_log(builds.runs[i].log_path)) for i in comparison.failed}
    if pair.divergent is None:
        traced = f"{len(pair.attempts)} traced rerun(s)"
        audit_seen = untraced.unexplained(builds, comparison, audited, set(), NoStep.NOT_REPRODUCED, None, traced)
        found_in_logs = _from_logs(builds.runs, comparison, pair, reference_trace, tuple(found), failures, audit_seen,
                                   Declared(graph, tree))
        return replace(found_in_logs, culprits=with_rules(found_in_logs.culprits, reference_trace, graph, tree),
                       notes=found_in_logs.notes + outside)
    divergent_trace = next(t for a, t in attempts if a is pair.divergent)
    differing = _differing(builds, pair.reference, pair.divergent)
    roots = find_roots(reference_trace, divergent_trace, differing,
                       builds.selection.everything(pair.divergent.built).entries.keys() - differing)
    shown = mark_manifest(found, comparison, failures, roots,
                          labels[1 + next(i for i, (a, _) in enumerate(attempts) if a is pair.divergent)],
                          reference_trace)
    if not pair.divergent.ok:  # what a failed build never got to is a consequence, not a cause
        roots = [r for r in roots if r.div is not None]
    # before any replay rewrites the traced tree
    noise = known_noise(builds.runs, evidence, executor, pair.reference, roots)
    ranked = ranking.rank(roots, builds.selection.artifacts, set(noise))
    made = provenance(reference_trace, pair.reference.manifest or Manifest({}), pair.divergent.manifest or Manifest({}),
                      [p for r in roots for p in r.outputs], lambda path, dest: executor.fetch(pair.reference, path, dest))
    kept = kept_files(pair.reference.trace_path, reference_trace, tree, parent)
    divergent_kept = kept_files(pair.divergent.trace_path, divergent_trace, tree, parent)
    contents = (traced_bytes(kept, partial(executor.fetch, pair.reference)),
                traced_bytes(divergent_kept, partial(executor.fetch, pair.divergent)))
    targets = ReplayTargets(reference_trace, divergent_trace, pair.reference.perturbation.jobs, made,
                            mtimes_of(pair.reference.manifest), kept, contents)
    taken, ranked = taken_over(ranked, audited, f"localization found it as a root of the {labels[0]} and the "
                                                f"{run_label(pair.divergent)} too")
    if ranked and not tree_here:
        return None
    if ranked:
        with replay_slots(executor, pair.reference, builds.replays_at_once, builds.logs / "replays") as slots:
            context = Context(pair.reference, pair.divergent, _replayer_factory(slots, 0, pair, targets),
                              tuple(found), budget, {roots[i].step.key: n for i, n in noise.items()},
                              builds.stabilizers, replay_seconds=lambda c: targets.of(c).duration,
                              shown_in=original_run(builds.runs, pair.divergent))
            contexts = [replace(context, replayer_for=_replayer_factory(slots, k, pair, targets))
                        for k in range(slots.count)]
            explained, left = _explain_in_budget(ranked, context, targets, contexts, taken, slots)
    else:  # every root was the audit's: no replay slot is set up
        explained, left = _explain_in_budget([], None, taken=taken)
    # a failed traced rerun differs in every file it never built: only what its roots that built their
    # outputs explain was traced (a step that failed explains the failure, never a successful build's bytes)
    reached = differing if pair.divergent.ok else {path for r in roots if not r.failed for path in r.explains}
    seen, unnamed = untraced.unexplained(builds, comparison, audited, reached, NoStep.NOT_IN_TRACED_RERUN
                                         if pair.divergent.ok else NoStep.TRACED_RERUN_FAILED, pair.divergent,
                                         run_label(pair.divergent))
    culprits = with_rules(one_per_hazard(one_per_step([*(_blame_duplicates(c, found, divergent_trace)
                                                        for c in explained), *seen]), found), reference_trace, graph, tree)
    minimal = _minimal_reproducer(builds, executor, pair.reference, pair.divergent.perturbation) if culprits else None
    notes = _notes(roots, left, budget, builds.stabilizers) + outside \
        + untraced.note(unnamed) + _driver_note(divergent_trace, differing) \
        + ((minimal.note,) if minimal and minimal.note else ())
    return Localization(tuple(culprits), shown, notes, minimal.command if minimal else None, traced=True,
                        budget_s=budget.seconds, slots=builds.replays_at_once,
                        unexplained_s=tuple(stabilizers.explaining_s(targets.of(r.root).duration, builds.stabilizers)
                                            for r in left), unnamed=unnamed)


def _from_audit(builds: Builds, comparison: Comparison, executor: Executor,
                audit: AuditOutcome | None) -> Localization | None:
    """The localization the step audit already made, or None: every file run 0 differs in
    from a telling run (or from the audit's traced build) leads back, in the audit's trace,
    to roots the audit found varying alone. Tracing a divergent build would only find them
    again: on a long build (the seed's), that build is the localization's largest cost."""
    if audit is None or not audit.classified or audit.reference is None or comparison.failed:
        return None
    telling = comparison.telling_runs()
    if not telling:
        return None
    reference, everything = audit.reference, builds.selection.everything
    first = everything(builds.runs[0].built)  # no run failed: every one left a manifest
    differing = differing_from(first, [*(builds.runs[i].built for i in telling), reference.built], everything)
    if not differing:
        return None
    trace = load_trace(reference.trace_file, builds.tree, builds.parent_outputs)
    roots = find_roots(trace, trace, differing, first.entries.keys() - differing)
    clause = (f"localization followed the {len(differing)} file(s) run 0 and {runs_text(telling)} differ in back to "
              "it through the step audit's traced reference")
    taken, rest = taken_over(ranking.rank(roots, builds.selection.artifacts, set()), audit.classified, clause)
    if rest or differing - {path for root in roots for path in root.explains}:
        return None
    label = "step audit's traced reference"
    graph = declared.declared_graph(builds.command, builds.tree, trace)
    shown = mark_manifest(trace_hazards.find_hazards([trace], [label], graph), comparison, {}, roots, "")
    explained, _ = _explain_in_budget([], None, taken=taken)
    # the audit names no race: a replay alone has no other step to race
    culprits = with_rules(one_per_step(explained), trace, graph, builds.tree)
    divergent = builds.runs[telling[0]].perturbation
    minimal = _minimal_reproducer(builds, executor, reference, divergent)
    note = (f"localization traced no divergent build: each of the {len(differing)} file(s) run 0 and "
            f"{runs_text(telling)} differ in leads back, in the step audit's trace, to one of {len(taken)} "
            f"step(s) it found varying alone{_of_all(len(taken), len(audit.classified))}; hazards were looked for "
            f"in that one trace only "
            f"({reference.perturbation.describe()}): a race whose steps did not overlap there is not among them")
    notes = (note, *_notes(roots, [], audit.budget, builds.stabilizers), *outside_note(trace, builds.compared_places),
             *((minimal.note,) if minimal.note else ()))
    return Localization(tuple(culprits), shown, notes, minimal.command, traced=True, budget_s=audit.budget.seconds,
                        slots=builds.replays_at_once)


def _of_all(reached: int, varying: int) -> str:
    """The audit's other varying steps are culprits too; the walk back stopped before them
    (their differing outputs also follow a differing input) or never met them."""
    return "" if reached == varying else f" (of the {varying} it found)"


def _explain_in_budget(ranked: list[ranking.Ranked], context: Context | None, targets: ReplayTargets | None = None,
                       contexts: list[Context] | None = None, taken: Sequence[tuple[ranking.Ranked, Culprit]] = (),
                       slots: Slots | None = None) -> tuple[list[Culprit], list[ranking.Ranked]]:
    """Classify in rank order while the budget lasts, as many at once as there are replay
    slots (`contexts`, one per slot); the culprits in report order (each with the process
    that wrote its bytes, given the traces' `targets`), with those `taken` over from the step
    audit, and the roots left unexplained. On an error or Ctrl-C, `slots` end the running replays."""
    done: list[tuple[ranking.Ranked, Culprit]] = list(taken)
    left: list[ranking.Ranked] = []

    def explain(root: ranking.Ranked, slot: Context) -> None:
        if context.budget.left() <= 0:
            left.append(root)
        else:
            culprit = classify(root.root, slot)
            done.append((root, targets.annotate(culprit, root.root) if targets else culprit))

    if ranked:
        in_slots(ranked, contexts or [context], explain, slots)
    done.sort(key=lambda pair: ranking.report_key(pair[0]))
    left.sort(key=ranked.index)
    return [culprit for _, culprit in done], left


def _notes(roots: list[RootCandidate], left: list[ranking.Ranked], budget: Budget, chosen: tuple[str, ...]) -> tuple[str, ...]:
    notes = [] if roots else ["no step could be named: the differing files were written by no traced step"]
    if left:
        named = "; ".join(f"`{r.root.command}` ({', '.join(r.root.outputs[:2]) or 'no output'}, {r.tier.label})"
                          for r in left[:LISTED])
        more = f"; and {len(left) - LISTED} more" if len(left) > LISTED else ""
        notes.append(f"{budget.describe()} was spent: {len(left)} root step(s) left unexplained: {named}{more}")
    missing = stabilizers.unusable(chosen) if chosen else []
    if missing:
        notes.append(f"stabiliser candidates not usable here (their tool is missing): {', '.join(missing)}")
    return tuple(notes)


def _driver_note(trace: BuildTrace, differing: set[str]) -> tuple[str, ...]:
    """Differing files a build driver wrote itself (ninja's `.ninja_log`): no step, no culprit."""
    by_driver = written_by_drivers(trace, differing)
    if not by_driver:
        return ()
    drivers = ", ".join(sorted(set(by_driver.values())))
    return (f"{len(by_driver)} differing file(s) were written by the build driver itself ({drivers}), which is no "
            f"step, so no culprit is named for them: {', '.join(sorted(by_driver)[:LISTED])}",)


def _minimal_reproducer(builds: Builds, executor: Executor, traced_reference: RunRecord,
                        divergent: Perturbation) -> Reproducer:
    """The traced reference rebuild already differed from run 0: any rebuild does, so the
    reference perturbation reproduces, and no build is spent shrinking."""
    if builds.differs_from_reference(traced_reference):
        return any_rebuild(builds)
    return minimal_reproducer(builds, executor, divergent)


def scan_hazards(builds: Builds, executor: Executor, traced: RunRecord | None = None) -> Localization:
    """One traced run at the campaign's most parallel perturbation, read together with a
    traced reference: races that did not change the output this time are still races.
    `traced`: a traced build already made (the step audit's reference), not built again
    where it is the same build; only its trace is read."""
    unusable = strace.STRACE.problem()
    if unusable:
        return Localization(notes=(f"hazard scan disabled: {unusable}",))
    perturbation = max((r.perturbation for r in builds.runs), key=lambda p: (p.jobs, p.ncpus, -p.jitter))
    tree, parent = builds.tree, builds.parent_outputs

    def trace(kind: RunKind, at: Perturbation) -> RunRecord:
        if traced is not None and traced.trace_path and traced.perturbation == at:
            return traced
        return executor.run(builds.request(kind, at, trace=True))

    parallel = trace(RunKind.HAZARD_SCAN, perturbation)
    traces = [load_trace(parallel.trace_file, tree, parent)]
    labels = [run_label(parallel)]
    if builds.runs[0].perturbation != perturbation:
        reference = trace(RunKind.TRACE_REFERENCE, builds.runs[0].perturbation)
        traces.append(load_trace(reference.trace_file, tree, parent))
        labels.append("traced reference")
    graph = declared.declared_graph(builds.command, tree, traces[0])
    found = with_missing_edges(trace_hazards.find_hazards(traces, labels, graph), traces[0], graph, tree)
    return Localization(hazards=found, traced=True,
                        notes=outside_note(traces[0], builds.compared_places))


def _from_logs(runs: Sequence[RunRecord], comparison: Comparison, pair: TracedPair,
               reference_trace: BuildTrace, hazards: tuple[Hazard, ...], failures: dict[int, str],
               seen: tuple[list[Culprit], tuple[UnnamedFile, ...]], declared: Declared) -> Localization:
    """No traced rerun diverged: read the failed runs' logs against the reference trace and
    the `declared` graph; `seen`: the audit's culprits for the files its replays saw vary,
    and the files left."""
    tried, (named, unnamed) = len(pair.attempts), seen
    for index in comparison.failed:
        run = runs[index]
        finding = explain_failure(read_log(run.log_path), index, reference_trace, declared)
        if finding is not None:
            note = (f"the failure did not reappear in {tried} traced reruns; the culprit comes from run {index}'s "
                    "log read against the traced reference build")
            found = _with_log_hazard(hazards, finding.hazard) if finding.hazard is not None else hazards
            return Localization(tuple(one_per_hazard([finding.culprit, *named], found)),
                                mark_manifest(found, comparison, failures, reference=reference_trace),
                                (note, *untraced.note(unnamed)), traced=True, unnamed=unnamed)
    why = (f"the divergence did not reappear in {tried} traced reruns"
           + (" and the failed runs' logs name no file the build generates" if comparison.failed else ""))
    listed = untraced.listing([u.path for u in unnamed])
    note = f"not enough evidence to name a step: {why}" + (f": {listed}" if unnamed else "")
    if named:
        note = (f"{why}; the step audit's replays saw {sum(len(c.outputs) for c in named)} of the files the runs "
                "differed in vary, and its culprits are named for them"
                + (f"; not enough evidence to name a step for the other {len(unnamed)}: {listed}" if unnamed else ""))
    return Localization(tuple(named), mark_manifest(hazards, comparison, failures, reference=reference_trace), (note,),
                        traced=True, unnamed=unnamed)


def _with_log_hazard(hazards: tuple[Hazard, ...], from_log: Hazard) -> tuple[Hazard, ...]:
    """One hazard per file: the traces' hazard on that file keeps its place and gains the
    log's evidence; only a file the traces had not flagged gets the log's hazard."""
    known = next((h for h in hazards if from_log.file in (h.files or [h.file])), None)
    if known is None:
        return (*hazards, from_log)
    merged = structs.replace(known, detail=f"{known.detail}; {from_log.detail}",
                     steps=sorted({*known.steps, *from_log.steps}))
    return tuple(merged if h is known else h for h in hazards)


def _replayer_factory(slots: Slots, slot: int, pair: TracedPair,
                      targets: ReplayTargets) -> Callable[[RootCandidate], Replayer]:
    def replayer_for(candidate: RootCandidate) -> Replayer:
        return slots.replayer(slot, targets.of(candidate).call, pair.reference.perturbation.cpus)

    return replayer_for


def _blame_duplicates(culprit: Culprit, found: Iterable[Hazard], trace: BuildTrace) -> Culprit:
    """A race against a writer that ran several times at once (one recipe for several
    targets) is that recipe's fault: the reader only saw its half-written output."""
    if culprit.kind != Kind.RACE or culprit.other_step is None:
        return culprit
    twice = [h for h in found if h.type == trace_hazards.DUPLICATE and h.writer == culprit.other_step]
    step = next((s for s in trace.steps if s.command == culprit.other_step), None)
    if not twice or step is None:
        return culprit
    evidence = (f"{twice[0].detail} ({twice[0].evidence}); `{culprit.command}` read its output while another "
                f"run of it was rewriting it: {culprit.evidence}")
    return Culprit(command=step.command, argv=list(step.argv), cwd=step.cwd,
                   outputs=sorted(f for h in twice for f in h.files),
                   kind=Kind.RACE, evidence=evidence, chain=culprit.chain, other_step=culprit.command, key=culprit.key)


def _differing(builds: Builds, reference: RunRecord, traced_divergent: RunRecord) -> set[str]:
    """Files that differ between the traced divergent run and either reference run.

    The stored reference counts too: a timestamp step differs from a reference built
    earlier but maybe not from the traced reference built in the same second."""
    everything = builds.selection.everything
    divergent = everything(traced_divergent.built)
    references = (reference.built, builds.runs[0].built)
    return {path for m in references for path in everything(m).differing(divergent)}



