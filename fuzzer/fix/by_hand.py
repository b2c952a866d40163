"""The remedy in words, for a finding whose build file no remedy can edit (a script, a
generated build.ninja, a debian/rules the step is not a rule of): what to change, by the
finding's shape, and which stabilisers this host could not try."""

from __future__ import annotations

import os
import re

from fuzzer.explain import build_path
from fuzzer.explain.stabilizers import TABLE
from fuzzer.fix.archive import AR, GZIP, TAR, TAR_SHELL_OPTIONS
from fuzzer.fix.stabiliser import UPSTREAM
from fuzzer.model import Culprit, Hazard, HazardType, Kind, Stabilizer
from fuzzer.tools import faketime

HAZARDS = {
    HazardType.MKDIR_RACE: "make every step that writes into {file} wait for it: an order-only prerequisite on the "
                           "directory (`target: prerequisites | {dir}`), and a rule that makes it (`{dir}:` with "
                           "`mkdir -p $@`) instead of a phony step",
    HazardType.READ_BEFORE_WRITE: "declare {edge} as a prerequisite of the step that reads it",
    HazardType.DUPLICATE: "make the recipe's targets in one run: grouped targets (`a b &: deps`, GNU make 4.3) or "
                          "one stamp file the targets depend on",
}
SAID_DATE = re.compile(r"(?:^|[\s;&|(`'\"])date(?=\s|$|[;&|)`<>'\"])")  # in a step's command, quoted too
DATE_REMEDY = "take the date from SOURCE_DATE_EPOCH, not the clock: `date -d @$SOURCE_DATE_EPOCH` instead of `date`"


def remedy(entry: Culprit | Hazard) -> str:
    """What to change, in words; "" when the finding's shape has no known remedy."""
    if isinstance(entry, Hazard):
        said = HAZARDS.get(entry.type, "")
        return said.format(file=entry.file, dir=entry.file.rstrip("/"), edge=entry.missing_edge or entry.file)
    line = entry.command
    if entry.kind == Kind.BUILD_PATH and entry.writer_process is not None and entry.writer_process.recorded_dir:
        return build_path.remedy(entry.writer_process)
    if entry.kind in (Kind.ORDER, Kind.UNKNOWN) or (entry.kind == Kind.INTRINSIC
                                                    and set(entry.stabilized_by) <= {Stabilizer.CLOCK.value}):
        archived = _archive(line)
        if archived:
            return archived
    if entry.kind == Kind.INTRINSIC and set(entry.stabilized_by) <= {Stabilizer.CLOCK.value} and _runs_date(entry):
        return DATE_REMEDY
    if entry.kind == Kind.INTRINSIC and entry.stabilized_by:
        upstream = "; ".join(UPSTREAM[n] for n in entry.stabilized_by if n in UPSTREAM)
        settings = " and ".join(_setting(name) for name in entry.stabilized_by)
        return f"run the step with {settings}" + (f"; upstream: {upstream}" if upstream else "")
    return ""


def untested(entry: Culprit | Hazard) -> list[str]:
    """An intrinsic step's stabilisers this host could not try: the clock without faketime."""
    if not isinstance(entry, Culprit) or entry.kind != Kind.INTRINSIC:
        return []
    problem = faketime.FAKETIME.problem()
    if problem is None:
        return []
    why = "faketime is not installed" if faketime.FAKETIME.path() is None else problem
    return [f"{Stabilizer.CLOCK.value} not tested: {why}"]


def _setting(name: str) -> str:
    """A stabiliser as the step would be run with it: its variables' values, else its name fixed."""
    env = next((v.env for v, _ in TABLE if v.name == name and v.env), ())
    return " ".join(f"{key}={value}" for key, value in env) or f"{name} fixed"


def _archive(line: str) -> str:
    said = []
    if TAR.search(line):
        said.append(f"tar {' '.join(TAR_SHELL_OPTIONS)}")
    if GZIP.search(line):
        said.append("gzip -n (no name, no mtime in the header)")
    if AR.search(line):
        said.append("ar D (deterministic headers: zero mtimes, uids and modes)")
    return "; ".join(said)


def _runs_date(culprit: Culprit) -> bool:
    process = culprit.writer_process
    return bool(SAID_DATE.search(culprit.command)) or (
        process is not None and bool(process.argv) and os.path.basename(process.argv[0]) == "date")
