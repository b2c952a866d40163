"""The terminal summary: verdict, what diverged and why, failures, how to replay."""

from __future__ import annotations

from fuzzer import findings, structs
from fuzzer.plan import Perturbation
from fuzzer.rates import described
from fuzzer.model import RunStatus, Verdict
from fuzzer.report.model import Report
from fuzzer.execute.step_replay import REPLAYS
from fuzzer.report.audit_text import audit_lines
from fuzzer.report.cut_short import cut_short_line
from fuzzer.escaping import one_line, quoted_commands_cut, safe_line
from fuzzer.execute.logs import failure_summary
from fuzzer.report.bookkeeping import bookkeeping_line
from fuzzer.report.packages import inside_lines, packages_line, set_aside_line
from fuzzer.report.source_line import LINE_CHARS, line_text

DIFF_LINES = 20
FINDINGS_SHOWN = 10  # per memory section; the JSON report lists them all
HEADLINES = {Verdict.REFERENCE_FAILED: "REFERENCE BUILD FAILED", Verdict.INCONCLUSIVE: "INCONCLUSIVE, no verdict"}


def render(report: Report) -> str:
    aside, kept = set_aside_line(report.packages), bookkeeping_line(report.bookkeeping)
    cut = cut_short_line(report.cut_short, REPLAYS)
    lines = [_verdict(report)] + report.bounds + ([cut] if cut else []) \
        + ([f"packages: {aside}"] if aside else []) + ([f"bookkeeping: {kept}"] if kept else []) + [""]
    if report.divergent_artifacts:
        lines.append(f"divergent artifacts ({len(report.divergent_artifacts)} of {report.artifacts_checked} checked):")
        for artifact in report.divergent_artifacts:
            lines.append(f"  {artifact.path}: {artifact.variants} variants")
            lines += [f"    {line}" for line in inside_lines(artifact)]
            for group in artifact.groups:
                lines.append(f"    {group.label}: runs {_runs(group.runs)}")
            for line in artifact.separated_by[:2]:
                lines.append(f"    separated by {line}")
            if artifact.same_conditions:
                lines.append("    differs between runs with identical perturbation: not parallelism alone")
        first = next((a for a in report.divergent_artifacts if a.diff), None)
        if first:
            lines += ["", f"diff of {first.path}, runs {first.diff_runs[0]} and {first.diff_runs[1]}:"]
            lines += ["  " + l for l in first.diff.splitlines()[:DIFF_LINES]]
    if report.packages:
        lines += ["", packages_line(report.packages)]
    failed = [r for r in report.runs if r.status != RunStatus.OK and r.index != 0]
    if failed:
        lines += ["", f"failed runs ({len(failed)}):"]
        for run in failed:
            lines.append(f"  run {run.index} ({_perturbation(run.perturbation)}): {run.status}, exit {run.exit_code}")
            lines += ["    | " + l for l in failure_summary(run.log_tail)]
    if report.culprits:
        lines += ["", "culprits (most likely first):"]
        for i, culprit in enumerate(report.culprits, 1):
            axis = f" ({culprit.axis})" if culprit.axis else ""
            lines.append(f"  {i}. [{culprit.kind}{axis}] {one_line(culprit.command)}  (in {culprit.cwd})")
            if culprit.writer_process:
                how = "replayed alone" if culprit.writer_process.replayed else "not replayable alone"
                lines.append(f"     written by: {one_line(culprit.writer_process.command)}  "
                             f"(in {culprit.writer_process.cwd}; {how})")
            if culprit.steps:
                lines.append(f"     {len(culprit.steps)} steps, one cause: " + "; ".join(map(one_line, culprit.steps)))
            if culprit.stabilized_by:
                lines.append(f"     stabilised by: {' + '.join(culprit.stabilized_by)}")
            if culprit.line:
                lines.append(f"     line: {one_line(line_text(culprit.line), LINE_CHARS)}")
            lines += ["     " + l for l in quoted_commands_cut(culprit.evidence).splitlines()]
    lines += audit_lines(report.audit)
    if report.hazards:
        lines += ["", f"hazards ({len(report.hazards)}):"]
        for hazard in report.hazards[:10]:
            lines.append(f"  {hazard.type} on {hazard.file} [{hazard.status}]: {one_line(hazard.reader)}  /  "
                         f"{one_line(hazard.writer)}")
            if hazard.missing_edge:
                at = f" (the rule at {hazard.rule})" if hazard.rule else ""
                lines.append(f"     missing prerequisite: {hazard.missing_edge}{at}")
            lines += [f"     {text}" for text in (quoted_commands_cut(hazard.evidence),
                                                  hazard.reproduce and "reproduce: " + hazard.reproduce) if text]
    lines += _memory(report) + _rates(report)
    for note in report.notes:
        lines += ["", f"note: {note}"]
    if report.minimal_reproducer:
        lines += ["", f"minimal reproducer: {report.minimal_reproducer}"]
    if report.reproduce and not report.reproducible:
        lines += ["", f"replay: {report.reproduce}"]
    # names, commands, diffs and log tails come from the build: one inert line each
    return "\n".join(map(safe_line, lines))


def _memory(report: Report) -> list[str]:
    """What earlier campaigns of this build add: new, fixed and known findings."""
    lines = []
    for title, found in findings.sections(report):
        lines += ["", f"{title} ({len(found)}):"]
        lines += [f"  {f.what}  [{f.kind} {f.id}]" for f in found[:FINDINGS_SHOWN]]
        if len(found) > FINDINGS_SHOWN:
            lines.append(f"  ... and {len(found) - FINDINGS_SHOWN} more in the JSON report")
    if findings.all_known(report):
        lines += ["", "every finding is known: exit 0 (only new findings fail)"]
    return lines


def _rates(report: Report) -> list[str]:
    """How often each finding showed, with the interval its count earns."""
    rated = [(f, described(f)) for f in report.findings if f.status != findings.FIXED and f.rate]
    if not rated:
        return []
    return ["", "how often (exact 95% intervals):"] + [f"  {f.what}: {text}" for f, text in rated]


def _verdict(report: Report) -> str:
    ok = sum(1 for r in report.runs if r.status == RunStatus.OK)
    reason = f", {report.exit_reason}" if report.exit_reason else ""
    headline = HEADLINES.get(report.verdict, report.verdict.upper())
    return f"verdict: {headline} ({len(report.runs)} runs, {ok} succeeded{reason})"


def _runs(indices: list[int]) -> str:
    text = ", ".join(map(str, indices[:12]))
    return text + (f" (+{len(indices) - 12})" if len(indices) > 12 else "")


def _perturbation(p: dict) -> str:
    return structs.convert(p, Perturbation).describe()
