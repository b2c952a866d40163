"""GitHub workflow commands from a report: one per finding not known, on the rule's line."""

from __future__ import annotations

from pathlib import Path

from msgspec import structs
from report_samples import reproducible, unreproducible

from fuzzer.model import Finding, FindingKind, FindingStatus
from fuzzer.report import github


def test_a_hazard_with_its_rule_is_annotated_on_that_line_of_the_checkout():
    report = unreproducible()
    hazard = structs.replace(report.hazards[0], rule="Makefile:22", missing_edge="ops.o: config.h")
    report = structs.replace(report, hazards=[hazard], source="/work/repo/pkg")
    [*culprits, line] = github.annotations(report, Path("/work/repo"))
    assert line.startswith("::error file=pkg/Makefile,line=22,title=buildfuzz::")
    assert len(culprits) == len(report.culprits) and all(c.startswith("::error title=buildfuzz::") for c in culprits)


def test_known_findings_are_not_annotated_and_a_green_report_has_none():
    report = unreproducible()
    first, *rest = report.culprits
    accepted = Finding("c0ffee", FindingKind.CULPRIT, first.command, FindingStatus.STILL, 1, "", 1, "", known=True)
    report = structs.replace(report, culprits=[structs.replace(first, finding_id="c0ffee"), *rest], findings=[accepted])
    lines = github.annotations(report, Path("/"))
    assert len(lines) == len(rest) + len(report.hazards)
    assert not [line for line in lines if first.command in line]
    assert github.annotations(reproducible(), Path("/")) == []


def test_messages_cannot_end_the_command_or_smuggle_another():
    report = unreproducible()
    culprit = structs.replace(report.culprits[0], command="a\n::error::forged, 100%")
    [line] = github.annotations(structs.replace(report, culprits=[culprit], hazards=[]), Path("/"))
    assert "\n" not in line and "] a%0A::error::forged, 100%25" in line
