"""findings: a stable identity for each thing a campaign found, from what it is alone.

A divergent artifact is its path; a culprit its command, working directory and kind; a
hazard its type and file; a failed build its status and first error line (numbers
blanked), each with its temporary names blanked (fuzzer/trace/tempnames.py: a CMake check's
`cmTC_f1560` is the next night's `cmTC_7b6b4`). The id is a short hash of those fields,
never of timings, seeds or run numbers:
the same bug found by another campaign, in another run order, has the same id, so the
store can say whether it is new, still there or fixed (fuzzer/memory.py), CI dashboards
track it by name, and a baseline lists the ones that must not fail CI.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from msgspec import structs

from fuzzer.escaping import one_line
from fuzzer.execute.logs import failure_lines
from fuzzer.interpreters import shown_command
from fuzzer.model import (ArtifactFinding, Culprit, ExitCode, ExitReason, Finding, FindingKind, FindingStatus, Hazard,
                          Report, RunStatus, RunSummary, Verdict)
from fuzzer.trace.tempnames import identity, normalised

# the names memory, bisect and the reports use
ARTIFACT, METADATA, FAILURE, CULPRIT, HAZARD = FindingKind
NEW, STILL, FIXED = FindingStatus
ID_PATTERN = re.compile(r"[0-9a-f]{12}")
NUMBERS = re.compile(r"\d+")  # line numbers, pids, byte counts: they move between runs of one bug


@dataclass(frozen=True)
class Identity:
    id: str
    kind: FindingKind
    what: str  # one line for people (and JUnit's test case name): made of the hashed fields only


def _identity(kind: FindingKind, what: str, *fields: str) -> Identity:
    digest = hashlib.sha256(json.dumps([kind, *fields]).encode()).hexdigest()
    return Identity(digest[:12], kind, what)


def of_artifact(artifact: ArtifactFinding) -> Identity:
    path = normalised(artifact.path)
    kind = METADATA if artifact.inside is not None and artifact.inside.metadata_only else ARTIFACT
    return _identity(kind, path, path)


def of_failure(run: RunSummary) -> Identity:
    signature = failure_signature(run.status, run.log_tail)
    return _identity(FAILURE, f"build {signature}", signature)


def of_culprit(culprit: Culprit) -> Identity:
    if culprit.steps and culprit.other_step:  # one cause, several steps: which of them failed first varies
        other, cwd = identity(culprit.other_step, culprit.cwd)
        return _identity(CULPRIT, f"[{culprit.kind}] steps unordered with {one_line(shown_command(other))} (in {cwd})",
                         other, cwd, culprit.kind, "steps")
    command, cwd = identity(culprit.command, culprit.cwd)
    return _identity(CULPRIT, f"[{culprit.kind}] {one_line(shown_command(command))} (in {cwd})", command, cwd,
                     culprit.kind)


def of_hazard(hazard: Hazard) -> Identity:
    file = normalised(hazard.file)
    return _identity(HAZARD, f"{hazard.type} on {file}", hazard.type, file)


def failure_signature(status: RunStatus, log_tail: str) -> str:
    """`failed: <first error line>`, or the bare status (a timeout's log says nothing of why)."""
    first = failure_lines(log_tail, 1) if status == RunStatus.FAILED else []
    error = first[0].strip() if first else ""
    return f"{status}: {NUMBERS.sub('N', normalised(error))}" if error else str(status)


def failed_runs(report: Report) -> list[RunSummary]:
    """Perturbed builds that failed while the reference passed (a failed reference has no findings)."""
    return _failed(report.runs)


def _failed(runs: list[RunSummary]) -> list[RunSummary]:
    if not runs or runs[0].status != RunStatus.OK:
        return []
    return [run for run in runs if run.index > 0 and run.status != RunStatus.OK]


def identities(report: Report) -> list[Identity]:
    """Each finding of the report once, in report order."""
    return identities_of(report.runs, report.divergent_artifacts, report.culprits, report.hazards)


def identities_of(runs: list[RunSummary], artifacts: list[ArtifactFinding], culprits: list[Culprit],
                  hazards: list[Hazard]) -> list[Identity]:
    """Each finding of a report's parts once, in report order (before the report is assembled)."""
    found = ([of_artifact(a) for a in artifacts] + [of_failure(r) for r in _failed(runs)]
             + [of_culprit(c) for c in culprits] + [of_hazard(h) for h in hazards])
    return list(dict.fromkeys(found))


def with_ids(report: Report) -> Report:
    """The report with each artifact, failed run, culprit and hazard carrying its finding's id."""
    failed = {run.index for run in failed_runs(report)}
    return structs.replace(
        report,
        divergent_artifacts=[structs.replace(a, finding_id=of_artifact(a).id) for a in report.divergent_artifacts],
        runs=[structs.replace(r, finding_id=of_failure(r).id) if r.index in failed else r for r in report.runs],
        culprits=[structs.replace(c, finding_id=of_culprit(c).id) for c in report.culprits],
        hazards=[structs.replace(h, finding_id=of_hazard(h).id) for h in report.hazards],
    )


def sections(report: Report) -> list[tuple[str, list[Finding]]]:
    """What the human formats show of the memory: the non-empty ones of these three lists."""
    current = [f for f in report.findings if f.status != FIXED]
    listed = [
        ("new since the last campaign", [f for f in current if f.status == NEW]),
        ("fixed since the last campaign", [f for f in report.findings if f.status == FIXED]),
        ("known (--baseline or buildfuzz accept): not failing CI", [f for f in current if f.known]),
    ]
    return [(title, found) for title, found in listed if found]


def first_campaign_line(report: Report) -> str:
    """For the first campaign of a build in its store: how many findings, and whether they
    were recorded (as fuzzer/memory.py records them: with a verdict, after all its builds)."""
    listed = [f for f in report.findings if f.status != FIXED]
    final = report.verdict in (Verdict.REPRODUCIBLE, Verdict.UNREPRODUCIBLE) \
        and report.exit_reason != ExitReason.INTERRUPTED
    how = "recorded" if final else "shown, not recorded until a campaign with a verdict completes its builds"
    return f"first campaign of this build in this store: {len(listed)} finding(s) {how}"


def all_known(report: Report) -> bool:
    """The builds differ only in known ways: `buildfuzz run` exits 0 (Report.exit_code)."""
    return report.verdict == Verdict.UNREPRODUCIBLE and report.exit_code == ExitCode.REPRODUCIBLE
