"""Python bytecode: the 16-byte header (magic, flags, then the source's mtime and size, or
its hash) apart from the marshalled code. A header-only difference is metadata: the
source's timestamp, which `SOURCE_DATE_EPOCH` (checked-hash pycs) takes out."""

from __future__ import annotations

from typing import BinaryIO, Iterator

from fuzzer.compare.inside import Context, Inside, first_difference, only_metadata

NAME = "pyc"
CONTAINER = False
HEADER = 16
HASH_BASED = 0x1


def sniff(name: str, head: bytes) -> bool:
    return name.endswith(".pyc") and len(head) >= HEADER and head[2:4] == b"\r\n"


def compare(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    head_a, head_b = a.read(HEADER), b.read(HEADER)
    changed = tuple(label for label, x, y in _fields(head_a, head_b) if x != y)
    offset, sizes = first_difference(a, b)
    if offset is not None and offset >= HEADER or head_a[:4] != head_b[:4]:
        return Inside(NAME, f"code differs (first at byte {offset}; sizes {sizes[0]} and {sizes[1]})"
                      + (f"; header too: {', '.join(changed)}" if changed else ""), metadata=changed)
    return only_metadata(NAME, "code identical", changed)


def _fields(x: bytes, y: bytes) -> Iterator[tuple[str, bytes, bytes]]:
    yield "pyc magic (Python version)", x[:4], y[:4]
    yield "pyc flags", x[4:8], y[4:8]
    hashed = int.from_bytes(x[4:8], "little") & HASH_BASED
    if hashed:
        yield "pyc source hash", x[8:16], y[8:16]
    else:
        yield "pyc source mtime", x[8:12], y[8:12]
        yield "pyc source size", x[12:16], y[12:16]
