"""The step audit's lines in the terminal report (the Markdown summary shares its two summaries)."""

from __future__ import annotations

from collections import Counter

from fuzzer.escaping import one_line
from fuzzer.model import AuditedStep, AuditResult, AuditSummary

SHOWN = 20  # steps listed; the JSON report has every one


def audit_lines(audit: AuditSummary | None) -> list[str]:
    if audit is None:
        return []
    lines = ["", summary_line(audit)]
    # what needs a reader goes first: twenty stable rows would hide a step that varied
    shown = sorted((s for s in audit.steps if s.result != AuditResult.LEFT),
                   key=lambda s: s.result == AuditResult.STABLE)
    repeated = Counter((s.command, s.cwd) for s in audit.steps)
    for step in shown[:SHOWN]:
        last = f"last audit {step.last_audit}" if step.last_audit else "never audited before"
        where = f"in {step.cwd}" + (_run(step) if repeated[step.command, step.cwd] > 1 else "")
        lines.append(f"  [{step.result}] {one_line(step.command)}  ({_writes(step.outputs)}{where}; {last})")
        if step.result != AuditResult.STABLE:
            lines.append(f"     {step.detail}")
    if len(shown) > SHOWN:
        lines.append(f"  and {len(shown) - SHOWN} more (the JSON report lists every step)")
    left = left_line(audit)
    return lines + ([f"  {left}"] if left else [])


def summary_line(audit: AuditSummary) -> str:
    unreplayable = sum(s.result == AuditResult.NOT_REPLAYABLE for s in audit.steps)
    failed = sum(s.result == AuditResult.REPLAY_FAILED for s in audit.steps)  # listed with why; not checked
    return (f"step audit ({audit.share:.0%} asked): {audit.audited} of {audit.reaching} steps replayed alone, "
            f"{audit.roots} varied, " + (f"{failed} failed to replay, " if failed else "")
            + f"{unreplayable} not replayable, {audit.left} left"
            + (f" ({audit.why_left})" if audit.why_left else ""))


def _run(step: AuditedStep) -> str:
    """Which run of a command that ran more than once in one directory a row is (Meson runs
    its compiler sanity check twice): the occurrence its identity ends with, from 1."""
    occurrence = step.identity.rpartition(" #")[2]
    return f", run #{int(occurrence) + 1}" if occurrence.isdigit() else ""


def _writes(outputs: list[str]) -> str:
    """The first file a row stands for: compile lines cut to one line look alike."""
    if not outputs:
        return ""
    more = f" and {len(outputs) - 1} more" if len(outputs) > 1 else ""
    return f"for {one_line(outputs[0])}{more}; "


def left_line(audit: AuditSummary) -> str:
    """When the steps left for later nights were last audited: the rotation in one line."""
    left = [s for s in audit.steps if s.result == AuditResult.LEFT]
    if not left:
        return ""
    audited = sorted(s.last_audit for s in left if s.last_audit)
    parts = [f"{len(left) - len(audited)} never audited"] if len(audited) < len(left) else []
    if audited:
        span = audited[0] if audited[0] == audited[-1] else f"{audited[0]} to {audited[-1]}"
        parts.append(f"{len(audited)} last audited {span}")
    return f"left for later campaigns: {len(left)} step{'' if len(left) == 1 else 's'} ({'; '.join(parts)})"
