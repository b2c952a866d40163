"""A remedy as a unified diff of one file, and applying it exactly (no fuzz, no offset).

We apply our own patches rather than run patch(1): a hunk applies only where its old lines
are exactly what the file holds now, so a file edited since the patch was proven is
refused instead of patched somewhere else.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


class PatchError(Exception):
    """The patch does not apply to the tree as it is now."""


@dataclass(frozen=True)
class Remedy:
    """What to change for one finding: a patch, or why there is none."""

    finding_id: str
    summary: str  # one line: what the change does
    file: str = ""  # relative to the source root
    patch: str = ""  # unified diff; "" when there is no patch
    reason: str = ""  # no patch: why
    upstream: str = ""  # the fix in the tool itself, where it is known


def unified(relative: str, old: list[str], new: list[str]) -> str:
    lines = difflib.unified_diff([f"{s}\n" for s in old], [f"{s}\n" for s in new], f"a/{relative}", f"b/{relative}")
    return "".join(lines)


def target_file(patch: str) -> str:
    """The file a patch of ours changes (the `+++ b/` line), refused if it leaves the tree."""
    m = re.search(r"^\+\+\+ b/(.+)$", patch, re.MULTILINE)
    if m is None:
        raise PatchError("not a patch of one file")
    name = m[1]
    if name.startswith("/") or ".." in Path(name).parts:
        raise PatchError(f"{name} is outside the source tree")
    return name


def apply(patch: str, root: Path) -> Path:
    """Apply the patch under `root`; the changed file."""
    path = root / target_file(patch)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise PatchError(f"{target_file(patch)} cannot be read: {e}") from None
    shift = 0
    for start, old, new in _hunks(patch):
        at = start - 1 + shift if old else start + shift
        if lines[at:at + len(old)] != old:
            raise PatchError(f"{target_file(patch)} changed since the patch was made (line {start})")
        lines[at:at + len(old)] = new
        shift += len(new) - len(old)
    path.write_text("".join(f"{s}\n" for s in lines), encoding="utf-8")
    return path


def _hunks(patch: str) -> list[tuple[int, list[str], list[str]]]:
    hunks: list[tuple[int, list[str], list[str]]] = []
    for line in patch.splitlines():
        if m := HUNK.match(line):
            hunks.append((int(m[1]), [], []))
        elif hunks and line[:1] in (" ", "-", "+"):  # headers come before the first hunk
            _, old, new = hunks[-1]
            if line[0] in " -":
                old.append(line[1:])
            if line[0] in " +":
                new.append(line[1:])
    if not hunks:
        raise PatchError("the patch has no hunk")
    return hunks
