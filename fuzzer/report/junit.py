"""JUnit XML (`--junit PATH`), so CI dashboards list what buildfuzz found as test results.

One failing testcase per divergent artifact, failed run, culprit and hazard, plus one
passing testcase for the artifacts that matched in every run: a dashboard that only
ever sees failures cannot tell "all good" from "nothing checked".
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from fuzzer.plan import Perturbation
from fuzzer.report.model import ArtifactFinding, Culprit, Hazard, Report, RunSummary

DIFF_LINES = 40
LOG_LINES = 30
# Characters XML 1.0 cannot carry at all, not even as character references; build
# output (ANSI colours, NULs, undecodable file names as lone surrogates) is full of them.
# The Markdown and HTML formats show the same characters the same way, through `visible`.
INVALID_XML = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render(report: Report) -> str:
    cases = _artifact_cases(report) + _run_cases(report) + _culprit_cases(report) + _hazard_cases(report)
    failures = sum(1 for case in cases if case.find("failure") is not None)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0", "skipped": "0"}
    wall = f"{sum(run.wall_s for run in report.runs):.3f}"
    root = ET.Element("testsuites", {"name": "buildfuzz", **counts, "time": wall})
    suite = ET.SubElement(root, "testsuite", {"name": "buildfuzz", **counts, "time": wall})
    suite.append(_properties(report))
    suite.extend(cases)
    ET.SubElement(suite, "system-out").text = visible(_summary(report))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _properties(report: Report) -> ET.Element:
    values = {
        "command": report.command,
        "verdict": report.verdict,
        "seed": str(report.seed),
        "campaign": str(report.campaign),
        "source": report.source,
        "reproduce": report.reproduce,
    }
    props = ET.Element("properties")
    for name, value in values.items():
        ET.SubElement(props, "property", {"name": name, "value": visible(value)})
    return props


def _artifact_cases(report: Report) -> list[ET.Element]:
    cases = [_artifact_case(a) for a in report.divergent_artifacts]
    identical = report.artifacts_checked - len(report.divergent_artifacts)
    if identical > 0:
        cases.append(_case("buildfuzz.artifacts", f"{identical} artifacts identical in every successful run"))
    return cases


def _artifact_case(artifact: ArtifactFinding) -> ET.Element:
    lines = [f"{g.label}: {g.digest} in runs {', '.join(map(str, g.runs))}" for g in artifact.groups]
    lines += [f"separated by {line}" for line in artifact.separated_by]
    if artifact.same_conditions:
        lines.append("differs between runs with identical perturbation: not parallelism alone")
    if artifact.diff:
        runs = " and ".join(map(str, artifact.diff_runs))
        lines += ["", f"diff (runs {runs}):", _tail(artifact.diff, DIFF_LINES, head=True)]
    message = f"{artifact.variants} variants"
    if artifact.axes:
        message += f", separated by {', '.join(artifact.axes)}"
    return _case("buildfuzz.artifacts", artifact.path, _failure(message, "divergent-artifact", lines))


def _run_cases(report: Report) -> list[ET.Element]:
    return [_run_case(run) for run in report.runs if run.status != "ok"]


def _run_case(run: RunSummary) -> ET.Element:
    perturbation = Perturbation.from_json(run.perturbation).describe()
    role = "reference build" if run.index == 0 else perturbation
    message = run.status if run.exit_code is None else f"{run.status}, exit {run.exit_code}"
    lines = [f"perturbation: {perturbation}"]
    if run.log_path:
        lines.append(f"log: {run.log_path}")
    lines += ["", _tail(run.log_tail, LOG_LINES)]
    case = _case("buildfuzz.runs", f"run {run.index} ({role})", _failure(message, f"{run.status}-run", lines))
    case.set("time", f"{run.wall_s:.3f}")
    return case


def _culprit_cases(report: Report) -> list[ET.Element]:
    return [_culprit_case(c) for c in report.culprits]


def _culprit_case(culprit: Culprit) -> ET.Element:
    axis = f" ({culprit.axis})" if culprit.axis else ""
    lines = [f"kind: {culprit.kind}{axis}", f"cwd: {culprit.cwd}", f"outputs: {', '.join(culprit.outputs)}"]
    if culprit.stabilized_by:
        lines.append(f"stabilised by: {' + '.join(culprit.stabilized_by)}")
    if culprit.chain:
        lines.append(f"chain: {' → '.join(culprit.chain)}")
    if culprit.writer:
        lines.append(f"written by: {' '.join(culprit.writer)}")
    if culprit.other_step:
        lines.append(f"concurrent step: {culprit.other_step}")
    lines += ["", culprit.evidence]
    failure = _failure(f"{culprit.kind}{axis}", culprit.kind, lines)
    return _case("buildfuzz.culprits", culprit.command, failure)


def _hazard_cases(report: Report) -> list[ET.Element]:
    return [_hazard_case(h) for h in report.hazards]


def _hazard_case(hazard: Hazard) -> ET.Element:
    # a hazard is a latent race: outputs matched this time, but only by luck of the schedule
    lines = [f"reader: {hazard.reader}", f"writer: {hazard.writer}"]
    failure = _failure(f"{hazard.type} on {hazard.file}", hazard.type, lines)
    return _case("buildfuzz.hazards", f"{hazard.type} {hazard.file}", failure)


def _case(classname: str, name: str, failure: ET.Element | None = None) -> ET.Element:
    case = ET.Element("testcase", {"classname": classname, "name": visible(name), "time": "0"})
    if failure is not None:
        case.append(failure)
    return case


def _failure(message: str, kind: str, lines: list[str]) -> ET.Element:
    failure = ET.Element("failure", {"message": visible(message), "type": visible(kind)})
    failure.text = visible("\n".join(lines).strip("\n"))
    return failure


def _summary(report: Report) -> str:
    lines = [f"verdict: {report.verdict}", f"command: {report.command}"]
    if report.reproduce:
        lines.append(f"replay: {report.reproduce}")
    if report.minimal_reproducer:
        lines.append(f"minimal reproducer: {report.minimal_reproducer}")
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def _tail(text: str, limit: int, head: bool = False) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:limit] if head else lines[-limit:])


def visible(text: str) -> str:
    """Show characters XML cannot carry as Python-style escapes instead of dropping them."""
    return INVALID_XML.sub(lambda m: ascii(m.group())[1:-1], text)
