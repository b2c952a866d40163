"""The Markdown summary (`--markdown PATH`, and appended to $GITHUB_STEP_SUMMARY).

Build strings (file names, commands, logs) are escaped wherever Markdown would read them,
so a file named `a|b` cannot split a table cell and `<img ...>` cannot become HTML in the
rendered summary. Code blocks carry raw text under a fence longer than any backtick run in it.
"""

from __future__ import annotations

import re

from fuzzer import findings, structs
from fuzzer.escaping import markdown_inline as _esc
from fuzzer.escaping import html_text, one_line, visible
from fuzzer.execute.logs import failure_summary
from fuzzer.model import ArtifactFinding, AuditResult, Report, RunStatus
from fuzzer.plan import Perturbation
from fuzzer.rates import described
from fuzzer.report.audit_text import left_line, summary_line
from fuzzer.report.bookkeeping import bookkeeping_line
from fuzzer.report.cause_block import CauseBlock, cause_block, command_line
from fuzzer.report.causes import causes
from fuzzer.report.counts import closing_line, contrived_headline, count_line
from fuzzer.report.packages import inside_lines, package_verdict, set_aside_line
from fuzzer.report.cut_short import interrupted_line
from fuzzer.report.scope import scope_line

DIFF_LINES = 40
LOG_LINES = 20
ARTIFACT_ROWS = 50  # one broken generated header can make hundreds of objects diverge
HAZARD_ROWS = 20
FINDING_ROWS = 20  # per memory section
# GitHub drops a step summary over 1 MiB, so one huge diff or log line must not eat it
EXCERPT_CHARS = 4000


def render(report: Report) -> str:
    """The answer first: the verdict, one block per cause, then the rest folded, and the verdict again."""
    found = causes(report)
    folded = [_failed_runs(report), _hazards(report), _artifacts(report), _packages(report), _audit(report),
              _bounds(report), _rates(report), _memory(report), _notes(report)]
    sections = [_headline(report), *(_cause(cause_block(i, found, report)) for i in range(1, len(found) + 1)),
                _details("The evidence in full: failed runs, hazards, artifacts, statistics, notes",
                         "\n\n".join(s for s in folded if s)) if any(folded) else "",
                _reproduce(report), f"**{_esc(closing_line(report))}**"]
    # control characters and lone surrogates (undecodable file names) shown as escapes
    return visible("\n\n".join(s for s in sections if s) + "\n")


def _headline(report: Report) -> str:
    icon = "✅" if report.reproducible else "❌"
    ok = sum(1 for r in report.runs if r.status == RunStatus.OK)
    facts = [f"{len(report.runs)} runs, {ok} succeeded", f"{len(report.divergent_artifacts)} of "
             f"{report.artifacts_checked} artifacts diverge", f"seed {report.seed}"]
    if report.exit_reason:
        facts.append(_esc(report.exit_reason))
    only = contrived_headline(report)
    counted = f"\n\nBuilds: {_esc(counted)}" if (counted := count_line(report)) else ""
    counted += f"\n\nScope: {_esc(scope_line(report.scope))}" if report.scope else ""
    counted += f"\n\n{_esc(cut)}" if (cut := interrupted_line(report)) else ""
    # an unreproducible verdict's bounds are folded with the rates: the count above says more
    bound = "".join(f"\n\n{_esc(text)}" for text in report.bounds) if report.reproducible else ""
    aside = set_aside_line(report.packages)
    return (f"## buildfuzz: {icon} {_esc(report.verdict)}{' ' + _esc(only) if only else ''}\n\n"
            f"{' · '.join(facts)}{counted}{bound}\n\nCommand: {_esc(report.command)}"
            + (f"\n\nPackages: {_esc(aside)}" if aside else "")
            + (f"\n\nBookkeeping: {_esc(kept)}" if (kept := bookkeeping_line(report.bookkeeping)) else ""))


def _memory(report: Report) -> str:
    """New, fixed and known findings, against earlier campaigns of this build (fuzzer/memory.py)."""
    if report.first_in_store:
        line = findings.first_campaign_line(report)
        return f"{line[0].upper()}{line[1:]}."
    parts = []
    for title, found in findings.sections(report):
        items = [f"- {_esc(f.what)} ({f.kind} `{f.id}`)" for f in found[:FINDING_ROWS]]
        if len(found) > FINDING_ROWS:
            items.append(f"- … and {len(found) - FINDING_ROWS} more in the JSON report")
        parts.append("\n".join([f"### {_esc(title[:1].upper() + title[1:])} ({len(found)})", "", *items]))
    if findings.all_known(report):
        parts.append("Every finding is known: exit 0, only new findings fail.")
    return "\n\n".join(parts)


def _rates(report: Report) -> str:
    """How often each finding showed, with the exact interval its count earns (fuzzer/rates.py)."""
    rated = [f"- {_esc(f.what)}: {_esc(text)}" for f in report.findings
             if f.status != findings.FIXED and (text := described(f))]
    if len(rated) > FINDING_ROWS:
        rated = rated[:FINDING_ROWS] + [f"- … and {len(rated) - FINDING_ROWS} more in the JSON report"]
    return "\n".join(["### How often (exact 95% intervals)", "", *rated]) if rated else ""


def _bounds(report: Report) -> str:
    """An unreproducible verdict's bounds (a reproducible one's are in the headline)."""
    if report.reproducible or not report.bounds:
        return ""
    return "\n".join(["### Bounds", "", *(f"- {_esc(text)}" for text in report.bounds)])


def _audit(report: Report) -> str:
    """The step audit: its counts, the steps that were not stable, and the rotation."""
    audit = report.audit
    if audit is None:
        return ""
    odd = [s for s in audit.steps if s.result not in (AuditResult.STABLE, AuditResult.LEFT)]
    items = [f"- **{s.result}**: {_esc(one_line(s.command))} (in {_esc(s.cwd)}): {_esc(one_line(s.detail))}"
             for s in odd[:FINDING_ROWS]]
    if len(odd) > FINDING_ROWS:
        items.append(f"- … and {len(odd) - FINDING_ROWS} more in the JSON report")
    left = left_line(audit)
    return "\n".join(["### Step audit", "", _esc(summary_line(audit)), *([""] + items if items else []),
                      *(["", _esc(left)] if left else [])])


def _artifacts(report: Report) -> str:
    if not report.divergent_artifacts:
        return ""
    rows = ["### Divergent artifacts", "", "| Artifact | Variants | Separated by |", "|---|---|---|"]
    for artifact in report.divergent_artifacts[:ARTIFACT_ROWS]:
        rows.append(f"| {_esc(artifact.path)} | {artifact.variants} | {_separation(artifact)} |")
    if len(report.divergent_artifacts) > ARTIFACT_ROWS:
        rows += ["", f"… and {len(report.divergent_artifacts) - ARTIFACT_ROWS} more in the JSON report."]
    inside = [f"- {_esc(a.path)}: " + "; ".join(_esc(line) for line in lines)
              for a in report.divergent_artifacts[:ARTIFACT_ROWS] if (lines := inside_lines(a))]
    diffs = [_diff(a) for a in report.divergent_artifacts if a.diff]
    return "\n".join(rows + ([""] + ["Inside, member by member:", ""] + inside if inside else []) + [""] + diffs).rstrip()


def _packages(report: Report) -> str:
    """The package files compared: what the verdict vouches for, by name."""
    if not report.packages:
        return ""
    rows = ["### Packages compared", "", "| Package | Size | sha256 | Across runs |", "|---|---|---|---|"]
    rows += [f"| {_esc(p.path)} | {p.size:,} bytes | `{p.digest[:16]}` | {_esc(package_verdict(p))} |"
             for p in report.packages]
    return "\n".join(rows)


def _separation(artifact: ArtifactFinding) -> str:
    parts = [_esc(line) for line in artifact.separated_by]
    if artifact.same_conditions:
        parts.append("differs under identical perturbation: not parallelism alone")
    return "<br>".join(parts) or "no single axis"


def _diff(artifact: ArtifactFinding) -> str:
    runs = " and ".join(map(str, artifact.diff_runs))
    summary = f"diff of {html_text(artifact.path)} (runs {runs})"
    return _details(summary, _code(_excerpt(artifact.diff, DIFF_LINES, head=True), "diff"))


def _cause(block: CauseBlock) -> str:
    axis = f" ({_esc(block.axis)})" if block.axis else ""
    lines = [f"### Cause {block.number} of {block.of}: {_esc(block.kind)}{axis}, {_esc(block.what)} "
             f"(in {_esc(block.cwd)})", "", f"- **step**: {_esc(block.step_lines[0])}"]
    if block.alike:
        lines.append(f"- {_esc(block.alike)}")
    lines += [f"- **{fact.name}**: {_esc(fact.line)}" for fact in block.facts]
    if len(block.steps) > 1:
        lines += ["", _details(f"all {len(block.steps)} steps", _code("\n".join(block.step_lines), "sh"))]
    if block.evidence:
        lines += ["", _details("the evidence in full", _code(block.evidence, "text"))]
    return "\n".join(lines).rstrip()


def _failed_runs(report: Report) -> str:
    failed = [r for r in report.runs if r.status != RunStatus.OK]
    if not failed:
        return ""
    rows = ["### Failed runs", "", "| Run | Perturbation | Status | Exit |", "|---|---|---|---|"]
    for run in failed:
        perturbation = structs.convert(run.perturbation, Perturbation).describe()
        role = " (reference)" if run.index == 0 else ""
        code = "–" if run.exit_code is None else run.exit_code
        rows.append(f"| {run.index}{role} | {_esc(perturbation)} | {_esc(run.status)} | {code} |")
    logs = [_details(f"run {r.index}: {html_text(first)}" if (first := _summary_line(r.log_tail)) else
                     f"log tail of run {r.index}", _code(_excerpt(r.log_tail, LOG_LINES), "text"))
            for r in failed if r.log_tail]
    return "\n".join(rows + [""] + logs).rstrip()


def _hazards(report: Report) -> str:
    if not report.hazards:
        return ""
    rows = [f"### Hazards ({len(report.hazards)})", "", "| Type | File | Reader | Writer | Missing prerequisite |",
            "|---|---|---|---|---|"]
    for h in report.hazards[:HAZARD_ROWS]:
        edge = f"{h.missing_edge} ({h.rule_lines()})" if h.rule else h.missing_edge
        rows.append(f"| {_esc(h.type)} | {_esc(h.file)} | {_esc(command_line(h.reader))} "
                    f"| {_esc(command_line(h.writer))} | {_esc(edge)} |")
    if len(report.hazards) > HAZARD_ROWS:
        rows += ["", f"… and {len(report.hazards) - HAZARD_ROWS} more in the JSON report."]
    return "\n".join(rows)


def _notes(report: Report) -> str:
    return "\n".join(["### Notes", ""] + [f"- {_esc(n)}" for n in report.notes]) if report.notes else ""


def _reproduce(report: Report) -> str:
    parts = []
    if report.reproduce and not report.reproducible:
        parts += ["### Replay", "", _code(report.reproduce, "sh")]
    if report.minimal_reproducer:
        parts += ["", "### Minimal reproducer", "", _code(report.minimal_reproducer, "sh")]
    return "\n".join(parts).strip()


def _details(summary: str, body: str) -> str:
    # the blank line after </summary> is what makes GitHub render the code block inside
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>\n"


def _code(text: str, lang: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _excerpt(text: str, limit: int, head: bool = False) -> str:
    lines = text.splitlines()
    lines = lines[:limit] if head else lines[-limit:]
    return "\n".join(lines)[:EXCERPT_CHARS]


def _summary_line(log: str) -> str:
    """What a failed run's summary quotes first (`failure_summary`: its first error line), on one line."""
    return one_line(failure_summary(log, 1)[0]) if log.strip() else ""
