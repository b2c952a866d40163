"""JUnit XML (`--junit PATH`), so CI dashboards list what buildfuzz found as test results.

One failing testcase per finding (fuzzer/findings.py): divergent artifact, kind of build
failure, culprit and hazard, plus one passing testcase for the artifacts that matched in
every run: a dashboard that only ever sees failures cannot tell "all good" from "nothing
checked". Test names come from what a finding is, never from run numbers, counts or
timings, so a dashboard tracks each one across nights: a finding fixed by this campaign
is a passing case under its old name, a known one (--baseline, `buildfuzz accept`) is
skipped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from fuzzer import findings, structs
from fuzzer.escaping import one_line, quoted_commands_cut, visible
from fuzzer.execute.logs import failure_summary
from fuzzer.findings import ARTIFACT, CULPRIT, FAILURE, FIXED, HAZARD, METADATA, NEW, Identity
from fuzzer.plan import Perturbation
from fuzzer.rates import described
from fuzzer.model import ArtifactFinding, Culprit, Finding, Hazard, Report, RunStatus, RunSummary
from fuzzer.report.bookkeeping import bookkeeping_line
from fuzzer.report.causes import causes, rule_place
from fuzzer.report.packages import inside_lines, packages_line, set_aside_line

DIFF_LINES = 40
LOG_LINES = 30
CLASSNAMES = {ARTIFACT: "buildfuzz.artifacts", FAILURE: "buildfuzz.runs", CULPRIT: "buildfuzz.culprits",
              HAZARD: "buildfuzz.hazards", METADATA: "buildfuzz.metadata"}
IDENTICAL = "artifacts identical in every successful run"  # one name whatever the count, for dashboards


def render(report: Report) -> str:
    cases = (_artifact_cases(report) + _run_cases(report) + _culprit_cases(report) + _hazard_cases(report)
             + _fixed_cases(report))
    failures = sum(1 for case in cases if case.find("failure") is not None)
    skipped = sum(1 for case in cases if case.find("skipped") is not None)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0", "skipped": str(skipped)}
    wall = f"{sum(run.wall_s for run in report.runs):.3f}"
    root = ET.Element("testsuites", {"name": "buildfuzz", **counts, "time": wall})
    suite = ET.SubElement(root, "testsuite", {"name": "buildfuzz", **counts, "time": wall, **_origin(report)})
    suite.append(_properties(report))
    suite.extend(cases)
    ET.SubElement(suite, "system-out").text = visible(_summary(report))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _origin(report: Report) -> dict[str, str]:
    """When and where the campaign ran, for a dashboard's suite: `timestamp` in UTC, without
    an offset as the JUnit schema has it; nothing for a report stored before it was recorded."""
    if report.origin is None:
        return {}
    try:
        started = datetime.fromisoformat(report.origin.started).astimezone(timezone.utc)
    except (ValueError, OverflowError):  # a report edited by hand: the host is still worth a dashboard's column
        return {"hostname": visible(report.origin.host)}
    return {"timestamp": started.replace(tzinfo=None).isoformat(timespec="seconds"), "hostname": visible(report.origin.host)}


def _properties(report: Report) -> ET.Element:
    values = {
        "command": report.command,
        "verdict": report.verdict,
        "seed": str(report.seed),
        "campaign": str(report.campaign),
        "source": report.source,
        "reproduce": report.reproduce,
        "confidence": report.confidence.get("text", ""),
        **({"buildfuzz": report.origin.buildfuzz, "ended": report.origin.ended} if report.origin else {}),
    }
    props = ET.Element("properties")
    for name, value in values.items():
        ET.SubElement(props, "property", {"name": name, "value": visible(value)})
    return props


def _artifact_cases(report: Report) -> list[ET.Element]:
    cases = [_artifact_case(report, a) for a in report.divergent_artifacts]
    if report.artifacts_checked > len(report.divergent_artifacts):
        cases.append(_case(CLASSNAMES[ARTIFACT], IDENTICAL))
    return cases


def _artifact_case(report: Report, artifact: ArtifactFinding) -> ET.Element:
    lines = inside_lines(artifact) + [f"{g.label}: {g.digest} in runs {', '.join(map(str, g.runs))}"
                                      for g in artifact.groups]
    lines += [f"separated by {line}" for line in artifact.separated_by]
    if artifact.same_conditions:
        lines.append("differs between runs with identical perturbation: not parallelism alone")
    if artifact.diff:
        runs = " and ".join(map(str, artifact.diff_runs))
        lines += ["", f"diff (runs {runs}):", _tail(artifact.diff, DIFF_LINES, head=True)]
    message = f"{artifact.variants} variants" + (f"; {artifact.inside.format}: {artifact.inside.summary}"
                                                  if artifact.inside else "")
    if artifact.axes:
        message += f", separated by {', '.join(artifact.axes)}"
    return _finding_case(report, findings.of_artifact(artifact), message, "divergent-artifact", lines)


def _run_cases(report: Report) -> list[ET.Element]:
    """One case per kind of failure (runs failing alike share it), or one for a failed reference."""
    if report.runs and report.runs[0].status != RunStatus.OK:
        return [_timed(_failed_case(report, None, [report.runs[0]]), report.runs[:1])]
    alike: dict[Identity, list[RunSummary]] = {}
    for run in findings.failed_runs(report):
        alike.setdefault(findings.of_failure(run), []).append(run)
    return [_timed(_failed_case(report, identity, runs), runs) for identity, runs in alike.items()]


def _failed_case(report: Report, identity: Identity | None, runs: list[RunSummary]) -> ET.Element:
    first = runs[0]
    message = first.status if first.exit_code is None else f"{first.status}, exit {first.exit_code}"
    lines = [f"run {run.index}: {structs.convert(run.perturbation, Perturbation).describe()}"
             + (f" (log: {run.log_path})" if run.log_path else "") for run in runs]
    lines += ["", "first error lines:", *failure_summary(first.log_tail), "", "log tail:", _tail(first.log_tail, LOG_LINES)]
    if identity is None:
        return _case(CLASSNAMES[FAILURE], "reference build", _failure(message, f"{first.status}-run", lines))
    return _finding_case(report, identity, message, f"{first.status}-run", lines)


def _timed(case: ET.Element, runs: list[RunSummary]) -> ET.Element:
    case.set("time", f"{sum(run.wall_s for run in runs):.3f}")
    return case


def _culprit_cases(report: Report) -> list[ET.Element]:
    """Each culprit at its rule's line, or its cause's (the rule its hazards lack an edge in)."""
    rules = {id(c): cause.rule for cause in causes(report) for c in cause.culprits}
    return [_placed(_culprit_case(report, c), c.rule or rules.get(id(c), "")) for c in report.culprits]


def _placed(case: ET.Element, rule: str) -> ET.Element:
    """`file` and `line` of the rule that ran the step, where make's database or ninja's graph says."""
    if place := rule_place(rule):
        case.set("file", visible(place[0]))
        case.set("line", place[1])
    return case


def _culprit_case(report: Report, culprit: Culprit) -> ET.Element:
    axis = f" ({culprit.axis})" if culprit.axis else ""
    lines = [f"kind: {culprit.kind}{axis}", f"cwd: {culprit.cwd}", f"outputs: {', '.join(culprit.outputs)}"]
    if culprit.stabilized_by:
        lines.append(f"stabilised by: {' + '.join(culprit.stabilized_by)}")
    if culprit.chain:
        lines.append(f"chain: {' → '.join(culprit.chain)}")
    if culprit.writer:
        lines.append(f"written by: {one_line(' '.join(culprit.writer))}")
    if culprit.other_step:
        lines.append(f"concurrent step: {one_line(culprit.other_step)}")
    if culprit.steps:  # one cause, several steps: one case, so a dashboard counts it once
        lines += [f"steps sharing its cause: {len(culprit.steps)}", *(f"step: {one_line(s)}" for s in culprit.steps)]
    lines += ["", quoted_commands_cut(culprit.evidence)]
    return _finding_case(report, findings.of_culprit(culprit), f"{culprit.kind}{axis}", culprit.kind, lines)


def _hazard_cases(report: Report) -> list[ET.Element]:
    return [_placed(_hazard_case(report, h), h.rule) for h in report.hazards]


def _hazard_case(report: Report, hazard: Hazard) -> ET.Element:
    # a hazard is a latent race: outputs matched this time, but only by luck of the schedule
    lines = [f"status: {hazard.status}", f"reader: {one_line(hazard.reader)}", f"writer: {one_line(hazard.writer)}"]
    if hazard.missing_edge:
        lines.append(f"missing prerequisite: {hazard.missing_edge}")
    if hazard.rule:
        lines.append(f"rule: {hazard.rule}")
    lines += [text for text in (quoted_commands_cut(hazard.evidence), hazard.reproduce and
                                f"reproduce: {hazard.reproduce}") if text]
    return _finding_case(report, findings.of_hazard(hazard), f"{hazard.type} on {hazard.file}", hazard.type, lines)


def _fixed_cases(report: Report) -> list[ET.Element]:
    """A finding this campaign found fixed passes under the name it failed under."""
    return [_case(CLASSNAMES[f.kind], f.what) for f in report.findings if f.status == FIXED]


def _finding_case(report: Report, identity: Identity, message: str, kind: str, lines: list[str]) -> ET.Element:
    """A failing case named after the finding, or a skipped one when it is known."""
    finding = next((f for f in report.findings if f.id == identity.id), None)
    if finding is not None:
        lines = [_sighting(finding), *filter(None, [described(finding)]), *lines]
    if finding is not None and finding.known:
        outcome = _failure(f"known finding (baseline or accepted): {message}", kind, lines, tag="skipped")
    else:
        outcome = _failure(message, kind, lines)
    return _case(CLASSNAMES[identity.kind], identity.what, outcome)


def _sighting(finding: Finding) -> str:
    since = "new since the last campaign" if finding.status == NEW else f"seen since campaign {finding.first_campaign}"
    return f"finding {finding.id}: {since} (first seen {finding.first_seen}, last {finding.last_seen})"


def _case(classname: str, name: str, outcome: ET.Element | None = None) -> ET.Element:
    case = ET.Element("testcase", {"classname": classname, "name": visible(name), "time": "0"})
    if outcome is not None:
        case.append(outcome)
    return case


def _failure(message: str, kind: str, lines: list[str], tag: str = "failure") -> ET.Element:
    failure = ET.Element(tag, {"message": visible(message), "type": visible(kind)})
    failure.text = visible("\n".join(lines).strip("\n"))
    return failure


def _summary(report: Report) -> str:
    lines = [f"verdict: {report.verdict}", f"command: {report.command}",
             f"artifacts compared: {report.artifacts_checked}"]
    lines += [f"confidence: {text}" for text in report.bounds]
    if aside := set_aside_line(report.packages):
        lines.append(f"packages: {aside}")
    if kept := bookkeeping_line(report.bookkeeping):
        lines.append(f"bookkeeping: {kept}")
    if report.packages:
        lines.append(packages_line(report.packages))
    if report.reproduce:
        lines.append(f"replay: {report.reproduce}")
    if report.minimal_reproducer:
        lines.append(f"minimal reproducer: {report.minimal_reproducer}")
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def _tail(text: str, limit: int, head: bool = False) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:limit] if head else lines[-limit:])
