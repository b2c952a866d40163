"""A short, readable diff of two variants of one artifact, for the report.

What the comparators found inside comes first (members, sections, metadata); text
gets a unified diff; other binaries a `strings`-level diff (what found the seed bug's
renumbered symbols), then hex context around the first differing byte when the strings
agree. diffoscope's deeper reports are files beside the report (`fuzzer/tools/diffoscope.py`).
"""

from __future__ import annotations

import difflib
import re

from fuzzer.compare.formats.text import is_text
from fuzzer.compare.inside import Inside

MAX_LINES = 40
READ_LIMIT = 64 << 20  # larger files are compared on their first 64 MiB only
STRINGS = re.compile(rb"[\x20-\x7e\t]{4,}")


def readable_diff(a: str, b: str, inside: Inside, labels: tuple[str, str] = ("a", "b")) -> str:
    if inside.format not in ("bytes", "text"):
        return _cut([f"{inside.format}: {inside.summary}", *inside.details, *inside.notes])
    return "\n".join([*inside.notes, diff_files(a, b, labels=labels)]).strip()


def diff_files(a: str, b: str, *, labels: tuple[str, str] = ("a", "b")) -> str:
    data_a, data_b = _read(a), _read(b)
    if is_text(data_a) and is_text(data_b):
        return _unified(data_a.decode(errors="replace").splitlines(), data_b.decode(errors="replace").splitlines(), labels)
    strings_diff = _unified(_strings(data_a), _strings(data_b), labels)
    if strings_diff:
        return "strings-level diff:\n" + strings_diff
    return hex_context(data_a, data_b)


def hex_context(a: bytes, b: bytes, width: int = 16, rows: int = 4) -> str:
    offset = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, offset - offset % width - width * (rows // 2))
    lines = [f"first difference at byte {offset} (sizes {len(a)} and {len(b)})"]
    for side, data in (("-", a), ("+", b)):
        for row in range(start, min(len(data), start + width * rows), width):
            chunk = data[row:row + width]
            lines.append(f"{side} {row:08x}  {chunk.hex(' ')}")
    return "\n".join(lines)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(READ_LIMIT)
    except OSError:
        return b""


def _strings(data: bytes) -> list[str]:
    return [m.group().decode("ascii") for m in STRINGS.finditer(data)]


def _unified(a: list[str], b: list[str], labels: tuple[str, str]) -> str:
    return _cut(list(difflib.unified_diff(a, b, labels[0], labels[1], lineterm="", n=2)))


def _cut(lines: list[str]) -> str:
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"... ({len(lines) - MAX_LINES} more lines)"]
    return "\n".join(lines)
