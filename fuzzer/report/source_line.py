"""An intrinsic culprit's first divergent source line (`Culprit.line`) and the patch to it
(`SourceLine.fix`), each said in one line for the text and Markdown reports."""

from __future__ import annotations

from pathlib import Path

from fuzzer.model import Fix, FixStatus, LineCause, LineStatus, SourceLine

LINE_CHARS = 800  # the line is cut only past this: values and the replays are its evidence

WHY = {
    LineCause.SET_OF_STR: "hashed by their strings, so its order follows the hash seed",
    LineCause.SET_BY_ADDRESS: "hashed by memory address (object.__hash__ or id()), so its order follows ASLR",
    LineCause.SET: "hashed by their own __hash__",
    LineCause.DICT_ORDER: "a dict, in the insertion order an unordered iteration gave it",
    LineCause.DIRECTORY_ORDER: "in the directory's order",
    LineCause.RANDOM: "random without a fixed seed",
    LineCause.CLOCK: "the clock",
    LineCause.UUID: "a random uuid",
    LineCause.ID_OR_HASH: "id() or hash() used as data",
    LineCause.TEMPFILE: "tempfile's random names",
    LineCause.UNKNOWN: "no known source of nondeterminism",
}


def line_text(line: SourceLine) -> str:
    if line.status == LineStatus.SKIPPED:
        return f"not searched: {line.note}"
    if line.status == LineStatus.NOT_FOUND:
        return f"not found: {line.note}"
    where = f"{Path(line.file).name}:{line.line} in {line.function}"
    what = f"iterates `{line.expression}`" if line.container or not line.expression.endswith("()") \
        else f"calls `{line.expression}`"
    seen = f"a {line.container} of {', '.join(line.elements) or 'nothing seen'}, " if line.container else ""
    values = " / ".join(line.values)
    how = (f"element {line.element} differs between the replays ({values})" if line.differed else
           "its values read the same in both (objects named in the order first seen): the nearest unordered source "
           "before they part")
    later = f"; control flow parts at {line.surfaced}" if line.surfaced else ""
    limits = f"; {line.note}" if line.note else ""
    return (f"{where}: {what} ({seen}{WHY[line.cause]}) [{line.cause}]: {how}{later}; "
            f"{len(line.replays)} traced replays ({'; '.join(line.replays)}), {line.tracer}, "
            f"at most {line.budget_s:.0f} s each{limits}")


def line_fix_text(fix: Fix, prove: str) -> str:
    """The patch to the line and where it stands; `prove`: the command that proves it."""
    if not fix.patch:
        return (f"by hand: {fix.by_hand} (no patch: {fix.why})" if fix.by_hand else f"no patch: {fix.why}")
    if fix.status == FixStatus.PROVEN and fix.proof is not None:
        counts = fix.proof
        return (f"{fix.patch} (proven: before {counts.reproduced}/{counts.before} reproduced; after 0/{counts.after}, "
                f"{counts.settings}): {fix.summary}")
    status = f"not proven: {fix.why}" if fix.status == FixStatus.NOT_PROVEN else f"suggested, not proven: {prove} proves it"
    return f"{fix.patch} ({status}): {fix.summary}"
