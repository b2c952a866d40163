"""The first lines of the terminal and HTML reports: the verdict, then what it rests on
(the count of builds, the scope, what the budget cut short, the package files set aside,
the build systems' bookkeeping), each a (name, line) pair the formats lay out their way."""

from __future__ import annotations

from fuzzer.execute.step_replay import REPLAYS
from fuzzer.model import Report, RunStatus
from fuzzer.report.bookkeeping import bookkeeping_line
from fuzzer.report.counts import HEADLINES, contrived_headline, count_line
from fuzzer.report.cut_short import cut_short_line, interrupted_line
from fuzzer.report.packages import set_aside_line
from fuzzer.report.scope import scope_line


def headline(report: Report) -> str:
    """The verdict in capitals, and for one that rests on held or shuffled builds alone, on what."""
    only = contrived_headline(report)
    return HEADLINES.get(report.verdict, report.verdict.upper()) + (f" {only}" if only else "")


def runs_line(report: Report) -> str:
    ok = sum(1 for r in report.runs if r.status == RunStatus.OK)
    reason = f", {report.exit_reason}" if report.exit_reason else ""
    return f"{len(report.runs)} runs, {ok} succeeded{reason}"


def opening(report: Report) -> list[tuple[str, str]]:
    """(name, line) under the verdict, the empty ones left out; the cut-short line names itself ("")."""
    facts = [("builds", count_line(report)), ("scope", scope_line(report.scope) if report.scope else ""),
             ("", interrupted_line(report)), ("", cut_short_line(report.cut_short, REPLAYS)),
             ("packages", set_aside_line(report.packages)),
             ("bookkeeping", bookkeeping_line(report.bookkeeping))]
    return [(name, line) for name, line in facts if line]
