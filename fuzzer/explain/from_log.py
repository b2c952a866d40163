"""When no traced rerun fails again: a failed run's own log, read against the reference trace.

A build that failed under one perturbation usually says why: `lexer.c:1:10: fatal error:
parser.h: No such file or directory`. The traced reference build knows every file:
which step wrote `parser.h`, and which step read it after. The step that read it in the
reference and found it missing in the failed run ran before its writer there: a race,
a missing dependency. The evidence is named as what it is: a log line and a trace.

The build's declared graph (`fuzzer.trace.declared`) then decides what it was. Where it
has no edge from the file to the reader's target, the hazard names the edge it lacks and
its rule's line, and `buildfuzz fix` adds it. Where it does declare one (`lexer.o:
parser.h`), the build would have waited for the file: it was missing for another reason
(a step removing or rewriting it, a recipe not writing what it declares, a sub-make with
a graph of its own), which the log does not tell. Then the failing step is named, of kind
unknown, with that said, and no hazard: the two steps were not unordered.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from msgspec import structs

from fuzzer.execute.logs import failed_targets
from fuzzer.model import Culprit, Hazard, HazardType, KeyEvidence, Kind
from fuzzer.trace.declared import DeclaredGraph
from fuzzer.trace.hazards import MKDIR_RACE, READ_BEFORE_WRITE
from fuzzer.trace.prerequisites import with_missing_edges
from fuzzer.trace.steps import BuildTrace, Step

MISSING = re.compile(r"no such file or directory|not found|cannot find|can't open|cannot open|cannot create|"
                     r"does not exist|directory nonexistent", re.IGNORECASE)
WORD = re.compile(r"[\w.+/-]+")
LOG_BYTES = 256 << 10


@dataclass(frozen=True)
class LogFinding:
    culprit: Culprit
    hazard: Hazard | None  # None: the declared graph orders the two steps, so it was no missing edge


@dataclass(frozen=True)
class Declared:
    """The build's declared graph and the tree whose build files it was read from."""

    graph: DeclaredGraph | None
    tree: str


@dataclass(frozen=True)
class Missed:
    """What a failed run's log and the reference trace show: `late` ran without `file`,
    which `first` made before it in the reference."""

    line: str  # the log's line
    run: int
    type: HazardType  # the hazard's type, were the two steps unordered
    file: str
    late: Step
    first: Step
    what: str  # what the reference trace shows
    unordered: str  # what that means where nothing orders `late` after `first`
    seen: str  # what the log shows


def explain_failure(log_text: str, run: int, reference: BuildTrace, declared: Declared = Declared(None, ".")
                    ) -> LogFinding | None:
    """The first missing file the log names that the reference build generated, judged
    against the `declared` graph where there is one."""
    failed = failed_targets(log_text)
    for line in log_text.splitlines():
        if not MISSING.search(line):
            continue
        for path in _generated_files(line, reference):
            missed = _missing_input(line.strip(), path, run, reference, failed) or \
                _missing_directory(line.strip(), path, run, reference)
            if missed is not None:
                return _judged(missed, reference, declared)
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


def _missing_input(line: str, path: str, run: int, trace: BuildTrace, failed_targets: set[str]) -> Missed | None:
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
            f"before {path} existed")
    return Missed(line, run, READ_BEFORE_WRITE, path, reader, writer, what,
                  "so nothing orders it after its writer: a missing dependency", f"the reader running without {path}")


def _missing_directory(line: str, path: str, run: int, trace: BuildTrace) -> Missed | None:
    """The step writing the file found its directory missing: another step creates it."""
    directory = os.path.dirname(path)
    writer = trace.writers(path)[0]
    maker = next((s for s in trace.steps if directory in s.mkdirs and s is not writer), None)
    if maker is None:
        return None
    what = (f"`{maker.command}` created {directory}/ before `{writer.command}` wrote {path} into it; in run {run} "
            "the writer ran before the directory existed")
    return Missed(line, run, MKDIR_RACE, directory + "/", writer, maker, what, "so nothing orders it after the mkdir",
                  f"the writer running without {directory}/")


def _judged(missed: Missed, trace: BuildTrace, declared: Declared) -> LogFinding:
    """The culprit (the step that ran too early) and its hazard with the edge the graph
    lacks; where the graph declares the order, the culprit of kind unknown saying so, and
    no hazard. The evidence says where it came from."""
    culprit, other, run = missed.late, missed.first, missed.run
    told = f"from run {run}'s log (the traced reruns did not fail again): \"{missed.line}\". In the traced reference " \
           f"build {missed.what}"
    graph = declared.graph
    ordered = _declared_order(graph, other, culprit, missed.file.rstrip("/")) if graph is not None else ""
    named = Culprit(command=culprit.command, argv=list(culprit.argv), cwd=culprit.cwd, outputs=sorted(culprit.outputs),
                    kind=Kind.RACE, evidence=f"{told}, {missed.unordered}", other_step=other.command,
                    key=KeyEvidence(file=missed.file, run=run))
    if ordered:
        said = (f"; but {ordered}, so the build waits for `{other.command}` before it: {missed.file} was not missing "
                "for a lack of an edge. Something else made it absent (a step removing or rewriting it, a recipe not "
                "writing what it declares, a sub-make with a graph of its own); the log does not say which")
        return LogFinding(structs.replace(named, kind=Kind.UNKNOWN, evidence=told + said), None)
    hazard = Hazard(missed.type, missed.file, culprit.command, other.command, detail=f"run {run}: {missed.line}",
                    evidence=f"not ordered: the reference trace ran `{other.command}` first, the log of run {run} "
                             f"shows {missed.seen}",
                    steps=sorted({culprit.command, other.command}), files=[missed.file], runs=[run],
                    traced=["traced reference"])
    return LogFinding(named, with_missing_edges([hazard], trace, graph, declared.tree)[0])


def _declared_order(graph: DeclaredGraph, first: Step, late: Step, needed: str) -> str:
    """How the graph puts `late` after `first`: a target of `late` needs the file (or
    directory), or every target of `first`; "" where it does not say so."""
    targets, before = sorted(graph.targets(late)), sorted(graph.targets(first))
    needing = next((t for t in targets if needed in graph.upstream(t)), None)
    if needing is not None:
        return f"{graph.source} has {needing} needing {needed}"
    if targets and before and all(b in graph.upstream(t) for b in before for t in targets):
        return f"{graph.source} orders {', '.join(before)} before {', '.join(targets)}"
    return ""


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
