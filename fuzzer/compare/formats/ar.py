"""ar archives: static libraries (`.a`) and Debian packages (`.deb`: debian-binary,
control.tar.*, data.tar.*, each then compared by its own format). Parsed here: the format
is a 60-byte header per member, and the standard library has no reader."""

from __future__ import annotations

import io
from typing import BinaryIO

from fuzzer.compare.formats.members import Member, compare_members, read_member, safe_name
from fuzzer.compare.inside import Context, Inside, Unsafe

NAME = "ar"
CONTAINER = True
MAGIC = b"!<arch>\n"
HEADER = 60
SYMBOL_INDEX = "(symbol index)"
SPECIAL = (b"/", b"//", b"/SYM64/")  # the symbol index and the long-name table


def sniff(name: str, head: bytes) -> bool:
    return head.startswith(MAGIC)


def compare(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    return compare_members(NAME, members(a, ctx), members(b, ctx), ctx)


def members(stream: BinaryIO, ctx: Context) -> list[Member]:
    stream.seek(len(MAGIC))
    members, long_names = [], b""
    while header := stream.read(HEADER):
        if len(header) < HEADER or header[58:60] != b"`\n":
            raise Unsafe("truncated or corrupt ar member header")
        raw, size = header[:16].rstrip(b" "), _number(header[48:58], 10)
        name, size = _name(raw, size, long_names, stream)
        digest, data = read_member(_Limited(stream, size), size, size, ctx, f"ar member {name!r}", name)
        if raw == b"//":
            long_names = data or b""
        else:
            meta = (("ar member mtimes", header[16:28].strip()), ("ar member owners", header[28:40].split()),
                    ("ar member modes", header[40:48].strip()))
            members.append(Member(SYMBOL_INDEX if raw in SPECIAL else name, "file", digest, data, meta))
        stream.read(size % 2)  # members are 2-byte aligned
    return members


def _name(raw: bytes, size: int, long_names: bytes, stream: BinaryIO) -> tuple[str, int]:
    """GNU: `name/`, `/123` into the `//` table; BSD: `#1/len` with the name before the data."""
    if raw in SPECIAL:
        return raw.decode(), size
    if raw.startswith(b"#1/"):
        length = _number(raw[3:], 10)
        return safe_name(stream.read(length).rstrip(b"\0").decode(errors="replace"), NAME), size - length
    if raw.startswith(b"/") and raw[1:].isdigit():
        offset = int(raw[1:])
        end = long_names.find(b"/\n", offset)
        raw = long_names[offset:end if end >= 0 else None]
    return safe_name(raw.removesuffix(b"/").decode(errors="replace") or raw.decode(errors="replace"), NAME), size


def _number(field: bytes, base: int) -> int:
    try:
        value = int(field.strip() or b"0", base)
    except ValueError:
        raise Unsafe(f"corrupt ar member header field {field!r}") from None
    if value < 0:
        raise Unsafe(f"negative ar member size {value}")
    return value


class _Limited(io.RawIOBase):
    """The next `size` bytes of a stream, for read_member's chunked reads."""

    def __init__(self, stream: BinaryIO, size: int):
        self.stream, self.left = stream, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.stream.read(n)
        if len(data) < n:
            raise Unsafe("truncated ar member")
        self.left -= len(data)
        return data
