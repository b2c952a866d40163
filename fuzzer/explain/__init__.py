"""explain: from traced runs, the step that introduced a divergence, its kind, and what
stabilises it (design.md, "Localization").

Phases: trace a divergent run and the reference → find root divergent steps and
hazards from the two traces → classify the top roots by replaying them alone →
shrink the divergent perturbation to a minimal reproducer. A reproducible campaign
still gets one traced parallel run, for latent hazards.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.execute.local import RunOptions, build_env
from fuzzer.explain.ablation import minimal_reproducer
from fuzzer.explain.classify import Context, classify
from fuzzer.explain.step_replay import StepReplayer
from fuzzer.explain.traced import trace_pair
from fuzzer.report.model import Culprit, Hazard
from fuzzer.tools import strace
from fuzzer.trace.graph import find_hazards, find_roots
from fuzzer.trace.steps import load_trace

CLASSIFIED = 3  # roots classified by replay; the rest are listed by the trace alone


@dataclass(frozen=True)
class Localization:
    culprits: tuple[Culprit, ...] = ()
    hazards: tuple[Hazard, ...] = ()
    notes: tuple[str, ...] = ()
    minimal_reproducer: str | None = None
    traced: bool = False


def localize(campaign, comparison, executor) -> Localization:
    unusable = strace.available()
    if unusable:
        return Localization(notes=(f"step localization disabled: {unusable}; results are artifact-level only",))
    pair = trace_pair(campaign, comparison, executor)
    tree = str(campaign.spec.workspace.path)
    reference_trace = load_trace(pair.reference.trace_path, tree)
    if pair.divergent is None:
        note = f"the divergence did not reappear in {pair.attempts} traced runs; hazards come from the reference trace"
        return Localization(hazards=_hazards(find_hazards([reference_trace])), notes=(note,), traced=True)
    divergent_trace = load_trace(pair.divergent.trace_path, tree)
    roots = find_roots(reference_trace, divergent_trace, _differing(campaign, pair))
    hazards = find_hazards([reference_trace, divergent_trace])

    def replayer_for(step, outputs):
        env = build_env(pair.reference.perturbation.jobs)
        return StepReplayer(executor.guard, campaign.spec.workspace.path, list(step.argv), step.cwd, outputs, env,
                            pair.reference.perturbation.cpus, campaign.spec.logs / "replays")

    context = Context(pair.reference, pair.divergent, replayer_for)
    culprits = [classify(candidate, context) for candidate in roots[:CLASSIFIED]]
    notes = () if roots else ("no step could be named: the differing files were written by no traced step",)
    minimal = minimal_reproducer(campaign, executor, pair.divergent.perturbation) if culprits else None
    return Localization(tuple(culprits), _hazards(hazards), notes, minimal, traced=True)


def scan_hazards(campaign, executor) -> Localization:
    """One traced run at the campaign's most parallel perturbation: races that did not
    change the output this time are still races."""
    unusable = strace.available()
    if unusable:
        return Localization(notes=(f"hazard scan disabled: {unusable}",))
    perturbation = max((r.perturbation for r in campaign.runs), key=lambda p: (p.jobs, p.ncpus, -p.jitter))
    record = executor.run(1000, perturbation, RunOptions(trace=True, label="-trace-hazards"))
    trace = load_trace(record.trace_path, str(campaign.spec.workspace.path))
    return Localization(hazards=_hazards(find_hazards([trace])), traced=True)


def _differing(campaign, pair) -> set[str]:
    """Files that differ between the traced divergent run and either reference run.

    The stored reference counts too: a timestamp step differs from a reference built
    earlier but maybe not from the traced reference built in the same second."""
    divergent = campaign.select_ignored(pair.divergent.manifest)
    references = (pair.reference.manifest, campaign.runs[0].manifest)
    return {path for m in references for path in campaign.select_ignored(m).differing(divergent)}


def _hazards(found) -> tuple[Hazard, ...]:
    """Contract keys: for write-write, `reader` holds the second writer."""
    hazards = []
    for h in found:
        data = h.to_json()
        other = data.get("reader") or data.get("other_writer", "")
        hazards.append(Hazard(h.type, h.file, other, data["writer"], h.detail))
    return tuple(hazards)
