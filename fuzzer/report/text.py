"""The terminal summary, answer first: the verdict and the count of builds, then one block
per cause (fuzzer/report/causes.py), then what supports it, folded (folds.py), and last
the verdict again with the exit code. `verbose` unfolds: every variant, every failed run's
log tail, the whole evidence, every finding."""

from __future__ import annotations

from fuzzer import findings, structs
from fuzzer.escaping import one_line, quoted_commands_cut, safe_line
from fuzzer.execute.logs import failure_summary
from fuzzer.model import ArtifactFinding, Report
from fuzzer.plan import Perturbation
from fuzzer.report.audit_text import audit_lines
from fuzzer.report.cause_block import CauseBlock, cause_block, command_line
from fuzzer.report.causes import Cause, causes, evidence_line, unattached_hazards
from fuzzer.report.counts import closing_line
from fuzzer.report.folds import artifact_folds, failure_folds, rate_folds
from fuzzer.report.opening import headline, opening, runs_line
from fuzzer.report.packages import inside_lines, packages_line

DIFF_LINES = 20
SHOWN = 5  # artifacts, findings and rates listed by name in a fold; --verbose and the JSON list them all
FINDINGS_SHOWN = 10  # per memory section, with --verbose
NOTE_CHARS = 200


def render(report: Report, verbose: bool = False) -> str:
    found = causes(report)
    lines = _opening(report)
    for number in range(1, len(found) + 1):
        lines += [""] + _cause(cause_block(number, found, report, verbose), verbose)
    lines += _failures(report, verbose) + _hazards(report, found, verbose) + _artifacts(report, verbose) \
        + audit_lines(report.audit) + _statistics(report, verbose) + _memory(report, verbose) \
        + _notes(report, verbose) + _replay(report) + ["", closing_line(report)]
    # names, commands, diffs and log tails come from the build: one inert line each
    return "\n".join(map(safe_line, lines))


def _opening(report: Report) -> list[str]:
    return [f"verdict: {headline(report)} ({runs_line(report)})"] + [f"{name}: {line}" if name else line
                                                                   for name, line in opening(report)]


def _cause(block: CauseBlock, verbose: bool) -> list[str]:
    axis = f" ({block.axis})" if block.axis else ""
    lines = [f"cause {block.number} of {block.of}: [{block.kind}{axis}] {block.what}, in {block.cwd}",
             f"  step:       {block.step_lines[0]}"]
    if verbose:
        lines += _exactly(block.steps[0], block.step_lines[0])
        lines += [f"              {step}" for step in block.step_lines[1:]]
    elif block.alike:
        lines.append(f"              {block.alike}")
    for fact in block.facts:
        if fact.name == "evidence" and verbose:
            lines += ["  evidence:"] + [f"    {line}" for line in block.evidence.splitlines()]
        else:
            lines.append(f"  {fact.name + ':':<11} {fact.line}")
            lines += _exactly(fact.value, fact.line) if verbose and fact.command else []
    return lines


def _exactly(command: str, shown: str) -> list[str]:
    """With --verbose, a command shown in other words (an interpreter's -c code) as it ran, whole."""
    return [f"  {'exactly:':<11} {command}"] if shown != one_line(command) else []


def _failures(report: Report, verbose: bool) -> list[str]:
    folds = failure_folds(report)
    if not folds:
        return []
    lines = ["", f"failed runs ({sum(len(f.runs) for f in folds)}):"]
    for fold in folds:
        numbers = ", ".join(str(r.index) for r in fold.runs)
        lines.append(f"  run{'s' if len(fold.runs) > 1 else ''} {numbers}: {fold.first_error}")
        if verbose:
            for run in fold.runs:
                lines.append(f"    run {run.index} ({_perturbation(run.perturbation)}): {run.status}, exit {run.exit_code}")
                lines += ["      | " + line for line in failure_summary(run.log_tail)]
    return lines


def _hazards(report: Report, found: list[Cause], verbose: bool) -> list[str]:
    """Hazards no cause's steps take part in (the causes show their own); every hazard, with
    its evidence and replay, with --verbose."""
    listed = report.hazards if verbose else unattached_hazards(report, found)
    if not listed:
        return []
    lines = ["", f"hazards ({len(listed)}):" if verbose else f"hazards behind no difference ({len(listed)}):"]
    for hazard in listed if verbose else listed[:10]:
        edge = f"; missing {hazard.missing_edge}" + (f" (the rule at {hazard.rule_lines()})" if hazard.rule else "") \
            if hazard.missing_edge else ""
        lines.append(f"  {hazard.type} on {hazard.file} [{hazard.status}]: {command_line(hazard.reader)}  /  "
                     f"{command_line(hazard.writer)}{edge}")
        if verbose:
            lines += [f"     {text}" for text in (quoted_commands_cut(hazard.evidence),
                                                  hazard.reproduce and "reproduce: " + hazard.reproduce) if text]
    return lines


def _artifacts(report: Report, verbose: bool) -> list[str]:
    if not report.divergent_artifacts:
        return [""] + [packages_line(report.packages)] if report.packages else []
    if verbose:
        return _artifacts_verbose(report)
    lines = [""]
    for fold in artifact_folds(report):
        names = [a.path for a in fold.artifacts]
        listed = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
        lines.append(f"{len(names)} of {report.artifacts_checked} artifacts {fold.pattern}: {listed}")
        separated = {tuple(a.separated_by[:1]) for a in fold.artifacts}
        if len(separated) == 1 and (line := separated.pop()):
            lines.append(f"  separated by {line[0]}")
    for artifact in report.divergent_artifacts[:SHOWN]:
        inside = inside_lines(artifact)
        lines += [f"  {artifact.path}: {inside[0]}"] + [f"    {line}" for line in inside[1:]] if inside else []
    return lines + ([packages_line(report.packages)] if report.packages else [])


def _artifacts_verbose(report: Report) -> list[str]:
    lines = ["", f"divergent artifacts ({len(report.divergent_artifacts)} of {report.artifacts_checked} checked):"]
    for artifact in report.divergent_artifacts:
        lines.append(f"  {artifact.path}: {artifact.variants} variants")
        lines += [f"    {line}" for line in inside_lines(artifact)]
        lines += [f"    {group.label}: runs {', '.join(map(str, group.runs))}" for group in artifact.groups]
        lines += [f"    separated by {line}" for line in artifact.separated_by[:2]]
        if artifact.same_conditions:
            lines.append("    differs between runs with identical perturbation: not parallelism alone")
    first: ArtifactFinding | None = next((a for a in report.divergent_artifacts if a.diff), None)
    if first:
        lines += ["", f"diff of {first.path}, runs {first.diff_runs[0]} and {first.diff_runs[1]}:"]
        lines += ["  " + line for line in first.diff.splitlines()[:DIFF_LINES]]
    return lines + ([packages_line(report.packages)] if report.packages else [])


def _statistics(report: Report, verbose: bool) -> list[str]:
    """The verdict's bound, each seeded axis's, and how often the findings showed."""
    # the bound an unreproducible verdict's count earns says less than the builds line above
    bounds = report.bounds if report.reproducible or verbose else [b.rate["text"] for b in report.axis_bounds]
    lines = ["", "statistics:"] + [f"  {text}" for text in bounds]
    folds = rate_folds(report)
    if verbose:
        lines += [f"  how often: {what}: {text}" for text, found in folds for what in found]
    else:
        lines += [f"  how often: {len(found)} finding(s) in {text}" for text, found in folds]
    return lines if len(lines) > 2 else []


def _memory(report: Report, verbose: bool) -> list[str]:
    """What earlier campaigns of this build add: new, fixed and known findings."""
    if report.first_in_store:
        listed = [f for f in report.findings if f.status != findings.FIXED]
        return ["", findings.first_campaign_line(report)] \
            + ([f"  {f.what}  [{f.kind} {f.id}]" for f in listed] if verbose else [])
    lines = []
    shown = FINDINGS_SHOWN if verbose else SHOWN
    for title, found in findings.sections(report):
        lines += ["", f"{title} ({len(found)}):"]
        lines += [f"  {f.what}  [{f.kind} {f.id}]" for f in found[:shown]]
        if len(found) > shown:
            lines.append(f"  ... and {len(found) - shown} more in the JSON report")
    return lines


def _notes(report: Report, verbose: bool) -> list[str]:
    if not report.notes:
        return []
    cut = (lambda note: note) if verbose else (lambda note: evidence_line(note, NOTE_CHARS))
    return [""] + [f"note: {cut(note)}" for note in report.notes]


def _replay(report: Report) -> list[str]:
    lines = []
    if report.minimal_reproducer:
        lines.append(f"minimal reproducer: {report.minimal_reproducer}")
    if report.reproduce and not report.reproducible:
        lines.append(f"replay: {report.reproduce}")
    return [""] + lines if lines else []


def _perturbation(p: dict) -> str:
    return structs.convert(p, Perturbation).describe()
