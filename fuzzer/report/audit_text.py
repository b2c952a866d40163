"""The step audit's lines in the terminal report."""

from __future__ import annotations

from fuzzer.escaping import one_line
from fuzzer.model import AuditResult
from fuzzer.report.model import AuditSummary

SHOWN = 20  # steps listed; the JSON report has every one


def audit_lines(audit: AuditSummary | None) -> list[str]:
    if audit is None:
        return []
    lines = ["", f"step audit ({audit.share:.0%} asked): {audit.audited} of {audit.reaching} steps replayed alone, "
             f"{audit.roots} varied, {audit.left} left" + (f" ({audit.why_left})" if audit.why_left else "")]
    shown = [s for s in audit.steps if s.result != AuditResult.LEFT]
    for step in shown[:SHOWN]:
        last = f"last audit {step.last_audit}" if step.last_audit else "never audited before"
        lines.append(f"  [{step.result}] {one_line(step.command)}  (in {step.cwd}; {last})")
        if step.result != AuditResult.STABLE:
            lines.append(f"     {step.detail}")
    if len(shown) > SHOWN:
        lines.append(f"  and {len(shown) - SHOWN} more (the JSON report lists every step)")
    return lines
