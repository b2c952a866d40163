"""GitHub Actions workflow commands for a report: one `::error` (or `::warning`) line per
culprit and hazard that is not known (`--baseline`, accepted), on the rule's file and line
where the finding has one, so the cause shows on the pull request's diff and the run's
summary. Printed only where GitHub runs the step (GITHUB_ACTIONS=true)."""

from __future__ import annotations

import os
from pathlib import Path

from fuzzer.interpreters import shown_command
from fuzzer.model import Culprit, Hazard, Report, Verdict
from fuzzer.report.causes import rule_place

TITLE = "buildfuzz"


def annotations(report: Report, workspace: Path) -> list[str]:
    """`workspace`: the checkout's root (GITHUB_WORKSPACE), which file paths are relative to."""
    known = {f.id for f in report.findings if f.known}
    level = "error" if report.verdict == Verdict.UNREPRODUCIBLE else "warning"
    found: list[Culprit | Hazard] = [*report.culprits, *report.hazards]
    return [_line(level, _where(getattr(item, "rule", ""), report.source, workspace), _message(item))
            for item in found if item.finding_id not in known]


def _message(item: Culprit | Hazard) -> str:
    if isinstance(item, Culprit):
        stabilised = f"; stabilised by {' + '.join(item.stabilized_by)}" if item.stabilized_by else ""
        return f"[{item.kind}] {shown_command(item.command)}{stabilised}"
    edge = f"; missing prerequisite {item.missing_edge}" if item.missing_edge else ""
    return f"{item.type} on {item.file} between {item.writer} and {item.reader}{edge}"


def _where(rule: str, source: str, workspace: Path) -> dict[str, str]:
    """`Makefile:22` in the source tree → the file relative to the workspace and the line."""
    place = rule_place(rule)
    if place is None:
        return {}
    return {"file": os.path.relpath(Path(source) / place[0], workspace), "line": place[1]}


def _line(level: str, where: dict[str, str], message: str) -> str:
    properties = ",".join(f"{key}={_escape_property(value)}" for key, value in {**where, "title": TITLE}.items())
    return f"::{level} {properties}::{_escape_data(message)}"


def _escape_data(text: str) -> str:
    # GitHub's own escaping (actions/toolkit, command.ts): a message may hold newlines and %
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
