"""Text, whatever its extension (`.buildinfo`, `.changes`, `METADATA`, `RECORD`): the lines
that differ, as a unified diff, never a hex dump."""

from __future__ import annotations

import difflib
from typing import BinaryIO

from fuzzer.compare.inside import MAX_MEMBER, Context, Inside, Unsafe

NAME = "text"
CONTAINER = False
SAMPLE = 8192
DIFF_LINES = 12


def sniff(name: str, head: bytes) -> bool:
    return is_text(head)


def is_text(data: bytes) -> bool:
    sample = data[:SAMPLE]
    if b"\0" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start > len(sample) - 4  # a multi-byte character cut at the sample's end
    return True


def compare(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    lines_a, lines_b = _lines(a), _lines(b)
    diff = list(difflib.unified_diff(lines_a, lines_b, "a", "b", lineterm="", n=0))[2:]
    changed = [line for line in diff if not line.startswith("@@")]
    first = next((line for line in diff if line.startswith("@@")), "@@ -0")
    at = first.split()[1].lstrip("-").split(",")[0]
    removed, added = (sum(line.startswith(sign) for line in changed) for sign in "-+")
    summary = f"{removed} of {len(lines_a)} lines differ, {added} in their place (first at line {at})" if changed \
        else "same lines, different bytes (line endings or a trailing newline)"
    more = (f"... {len(changed) - DIFF_LINES} more",) if len(changed) > DIFF_LINES else ()
    details = tuple(changed[:DIFF_LINES]) + more
    return Inside(NAME, summary, details=details)


def _lines(stream: BinaryIO) -> list[str]:
    data = stream.read(MAX_MEMBER + 1)
    if len(data) > MAX_MEMBER:
        raise Unsafe(f"text over {MAX_MEMBER >> 20} MiB")
    return data.decode("utf-8", errors="replace").splitlines()
