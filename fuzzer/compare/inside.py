"""Look inside two variants of one artifact: which members differ in content, and whether
the rest differs only in metadata (timestamps, order, modes, owners, compression headers).

`look_inside(a, b, name)` picks a comparator from the registry in `formats/` by the bytes
(the name is only a hint: a `.buildinfo` is text, a `.whl` a zip) and returns one frozen
`Inside`. Everything is read from open streams or memory, never extracted to disk. An
input a comparator cannot read safely (corrupt, truncated, a bomb, nested too deep, a
member named `/etc/x` or `../x`) is compared as bytes, with a one-line note saying why:
an archive is hostile until read.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field, replace
from typing import BinaryIO

import msgspec

MAX_DEPTH = 4  # .deb → data.tar.xz → usr/lib/x.a → x.o is three levels
MAX_UNPACKED = 1 << 30  # bytes read out of archives per comparison: both sides, all members together
MAX_MEMBER = 256 << 20  # one member read into memory; larger ones are compared by digest only
MAX_RATIO = 200  # a member expanding more than this (and past 1 MiB) is a bomb, not a package
CHUNK = 8 << 20
MAX_LISTED = 20  # members named in `details`; the count says the rest


class Unsafe(Exception):
    """An input that must not be read further: its message is the one-line note."""


class Inside(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What differs between two variants, as far as the comparators could see (the JSON
    report's `inside`, in this order)."""

    format: str  # zip | tar | tar.xz | ar | gzip | elf | pyc | text | bytes ...
    summary: str  # one line: "44 members identical in content; only zip entry timestamps differ"
    metadata_only: bool = False  # True: every member (or the code) is identical in content
    members: tuple[str, ...] = ()  # members whose content differs, nested ones as outer/inner
    identical: int = 0  # members identical in content
    metadata: tuple[str, ...] = ()  # what else differs: "zip entry timestamps", "member order", ...
    details: tuple[str, ...] = ()  # one line per differing member, or per finding of a format
    notes: tuple[str, ...] = ()  # why something was compared as bytes

    @property
    def content_differs(self) -> bool:
        return not self.metadata_only


@dataclass
class Budget:
    """Bytes one comparison may still read out of archives: shared by both sides and every nested member."""

    left: int = MAX_UNPACKED

    def take(self, size: int, what: str) -> None:
        if size > self.left:
            raise Unsafe(f"{what} would unpack past {MAX_UNPACKED >> 20} MiB in all")
        self.left -= size


@dataclass(frozen=True)
class Context:
    name: str  # the path shown: artifact, or member inside it
    depth: int = 0
    budget: Budget = field(default_factory=Budget)

    def inner(self, name: str) -> "Context":
        return replace(self, name=name, depth=self.depth + 1)


def look_inside(a: str, b: str, name: str) -> Inside:
    """Compare two files by their format; `name` (the artifact's path) is a hint and the label."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return compare_streams(fa, fb, Context(name))


def compare_bytes(a: bytes, b: bytes, ctx: Context) -> Inside:
    return compare_streams(io.BytesIO(a), io.BytesIO(b), ctx)


def compare_streams(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    """The comparator both variants' bytes call for, or bytes with the reason as a note."""
    from fuzzer.compare import formats

    head_a, head_b = _head(a), _head(b)
    found = formats.sniff(ctx.name, head_a), formats.sniff(ctx.name, head_b)
    if found[0] is None or found[0] is not found[1]:
        known = [fmt.NAME for fmt in found if fmt is not None]
        note = f"one variant reads as {known[0]}, the other does not" if len(set(known)) == 1 else ""
        return as_bytes(a, b, ctx, note)
    if ctx.depth > MAX_DEPTH and found[0].CONTAINER:
        return as_bytes(a, b, ctx, f"nested deeper than {MAX_DEPTH} archives")
    try:
        return found[0].compare(a, b, ctx)
    except Unsafe as e:
        return as_bytes(a, b, ctx, str(e))
    except Exception as e:  # noqa: BLE001 - a hostile file may break any parser anywhere
        return as_bytes(a, b, ctx, f"unreadable as {found[0].NAME} ({type(e).__name__}: {_short(e)})")


def as_bytes(a: BinaryIO, b: BinaryIO, ctx: Context, note: str = "") -> Inside:
    offset, sizes = first_difference(a, b)
    if offset is None:
        return Inside("bytes", "identical bytes", metadata_only=True)
    summary = f"first difference at byte {offset} (sizes {sizes[0]} and {sizes[1]})"
    notes = (f"{ctx.name}: compared as bytes: {note}",) if note else ()
    return Inside("bytes", summary, notes=notes)


def first_difference(a: BinaryIO, b: BinaryIO) -> tuple[int | None, tuple[int, int]]:
    """The offset of the first differing byte (None: same bytes) and both sizes, in one pass."""
    a.seek(0), b.seek(0)
    offset, found = 0, None
    while True:
        x, y = a.read(CHUNK), b.read(CHUNK)
        if found is None and x != y:
            found = offset + _mismatch(x, y)
        if not x and not y:
            return found, (_size(a), _size(b))
        offset += max(len(x), len(y))


def _mismatch(x: bytes, y: bytes) -> int:
    """The first index where two different chunks differ, by bisection (memcmp, not a loop)."""
    lo, hi = 0, min(len(x), len(y))
    while lo < hi:
        mid = (lo + hi) // 2
        if x[lo:mid + 1] == y[lo:mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _size(f: BinaryIO) -> int:
    return f.seek(0, io.SEEK_END)


def _head(f: BinaryIO) -> bytes:
    f.seek(0)
    head = f.read(512)
    f.seek(0)
    return head


def _short(e: Exception, limit: int = 120) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def only_metadata(fmt: str, same: str, metadata: tuple[str, ...] | list[str]) -> Inside:
    """Content identical; `metadata` says what differs instead."""
    return Inside(fmt, f"{same}; only {', '.join(metadata)} {differ(metadata)}", metadata_only=True,
                  metadata=tuple(metadata))


def differ(things: tuple[str, ...] | list[str]) -> str:
    """"timestamps differ", "member order differs": the label's last noun decides."""
    noun = things[0].split(" (")[0] if len(things) == 1 else "many"
    return "differ" if len(things) > 1 or noun.endswith("s") else "differs"


def listed(names: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    return shown + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
