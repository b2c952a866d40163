"""When no traced rerun fails again: a failed run's own log, read against the reference trace.

A build that failed under one perturbation usually says why: `lexer.c:1:10: fatal error:
parser.h: No such file or directory`. The traced reference build knows every file:
which step wrote `parser.h`, and which step read it after. The step that read it in the
reference and found it missing in the failed run ran before its writer there: a race,
a missing dependency. The evidence is named as what it is: a log line and a trace.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from fuzzer.execute.logs import failed_targets
from fuzzer.model import Culprit, Hazard, HazardType, Kind
from fuzzer.trace.hazards import MKDIR_RACE, READ_BEFORE_WRITE
from fuzzer.trace.steps import BuildTrace, Step

MISSING = re.compile(r"no such file or directory|not found|cannot find|can't open|cannot open|cannot create|"
                     r"does not exist|directory nonexistent", re.IGNORECASE)
WORD = re.compile(r"[\w.+/-]+")
LOG_BYTES = 256 << 10


@dataclass(frozen=True)
class LogFinding:
    culprit: Culprit
    hazard: Hazard


def explain_failure(log_text: str, run: int, reference: BuildTrace) -> LogFinding | None:
    """The first missing file the log names that the reference build generated."""
    failed = failed_targets(log_text)
    for line in log_text.splitlines():
        if not MISSING.search(line):
            continue
        for path in _generated_files(line, reference):
            finding = _finding(line.strip(), path, run, reference, failed)
            if finding is not None:
                return finding
    return None


def read_log(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(LOG_BYTES).decode(errors="replace")
    except OSError:
        return ""


def _generated_files(line: str, trace: BuildTrace) -> list[str]:
    """Workspace files a step wrote whose name (or path suffix) the line mentions."""
    words = {w.strip("./'\"`:") for w in WORD.findall(line)}
    words = {w for w in words if "." in w or "/" in w}
    found = []
    for path in trace.writers_of:
        if path.startswith("/"):
            continue
        if any(path == w or path.endswith("/" + w) or os.path.basename(path) == w for w in words):
            found.append(path)
    return sorted(found)


def _finding(line: str, path: str, run: int, trace: BuildTrace, failed_targets: set[str]) -> LogFinding | None:
    return _missing_input(line, path, run, trace, failed_targets) or _missing_directory(line, path, run, trace)


def _missing_input(line: str, path: str, run: int, trace: BuildTrace, failed_targets: set[str]) -> LogFinding | None:
    """The file one step writes was not there yet when another read it. The reader is the
    one the log names (make's failed target, or a file of it in the error line); with
    several readers and no name, the log is not enough evidence."""
    writer = trace.writers(path)[0]
    readers = [s for s in trace.steps if path in s.inputs and s is not writer and s.start >= writer.end]
    reader = _building(failed_targets, readers) or _named_in(line, path, readers)
    if reader is None and len(readers) == 1:
        reader = readers[0]
    if reader is None:
        return None
    what = (f"`{writer.command}` wrote {path} before `{reader.command}` read it; in run {run} the reader ran "
            f"before {path} existed, so nothing orders it after its writer: a missing dependency")
    return _finding_from(line, run, READ_BEFORE_WRITE, path, reader, writer, what, f"the reader running without {path}")


def _missing_directory(line: str, path: str, run: int, trace: BuildTrace) -> LogFinding | None:
    """The step writing the file found its directory missing: another step creates it."""
    directory = os.path.dirname(path)
    writer = trace.writers(path)[0]
    maker = next((s for s in trace.steps if directory in s.mkdirs and s is not writer), None)
    if maker is None:
        return None
    what = (f"`{maker.command}` created {directory}/ before `{writer.command}` wrote {path} into it; in run {run} "
            "the writer ran before the directory existed, so nothing orders it after the mkdir")
    return _finding_from(line, run, MKDIR_RACE, directory + "/", writer, maker, what,
                         f"the writer running without {directory}/")


def _finding_from(line: str, run: int, kind: HazardType, file: str, culprit: Step, other: Step, what: str,
                  seen: str) -> LogFinding:
    """The culprit (the step that ran too early) and its hazard, saying where the evidence came from."""
    evidence = (f"from run {run}'s log (the traced reruns did not fail again): \"{line}\". In the traced reference "
                f"build {what}")
    return LogFinding(
        Culprit(command=culprit.command, argv=list(culprit.argv), cwd=culprit.cwd, outputs=sorted(culprit.outputs),
                kind=Kind.RACE, evidence=evidence, other_step=other.command),
        Hazard(kind, file, culprit.command, other.command, detail=f"run {run}: {line}",
               evidence=f"not ordered: the reference trace ran `{other.command}` first, the log of run {run} "
                        f"shows {seen}",
               steps=sorted({culprit.command, other.command}), files=[file], runs=[run],
               traced=["traced reference"]),
    )


def _building(targets: set[str], readers: list[Step]) -> Step | None:
    """The reader whose outputs include a target make reported failing."""
    names = {os.path.basename(t) for t in targets}
    return next((s for s in readers if any(os.path.basename(p) in names for p in s.outputs)), None)


def _named_in(line: str, missing: str, readers: list[Step]) -> Step | None:
    """The reader whose source file or output the error line names (`lexer.c:1:10: ...`)."""
    words = set(WORD.findall(line))
    for step in readers:
        names = {os.path.basename(p) for p in (*step.inputs, *step.outputs) if p != missing}
        if any(os.path.basename(w.strip(":")) in names for w in words):
            return step
    return None
