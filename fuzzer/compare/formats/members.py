"""Member-by-member comparison, shared by every archive format.

An archive reader turns each variant into a list of `Member`s; `compare_members` says
which members differ in content (recursing into nested archives), how many are
identical, and which metadata (timestamps, modes, owners, order, headers) differs.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Protocol

import msgspec

from fuzzer.compare.inside import (CHUNK, MAX_MEMBER, MAX_RATIO, Context, Inside, Unsafe, compare_bytes, differ, listed,
                                   only_metadata)
from fuzzer.observe import hasher

BOMB_FLOOR = 1 << 20  # small members may compress well (a file of zeros); only large ones are bombs


@dataclass(frozen=True)
class Member:
    name: str
    kind: str  # file | dir | symlink | other
    digest: str  # of the content; a link's target; "" for a directory
    data: bytes | None = None  # the content, for nested comparison (None: too large, digest only)
    meta: tuple[tuple[str, object], ...] = ()  # (what it is, value): ("tar member mtimes", 1700000000)


def safe_name(name: str, fmt: str) -> str:
    """A member name never reaches the file system, but an absolute or `..` name is how a
    hostile archive says what it is: refuse to read it further."""
    if name.startswith("/") or ".." in posixpath.normpath(name).split("/") or "\0" in name:
        raise Unsafe(f"{fmt} member {name!r} has an absolute or parent-relative path")
    return name


class Readable(Protocol):
    """What read_member reads: a file, a decompressing reader, an archive's member."""

    def read(self, size: int = ..., /) -> bytes: ...


def read_member(stream: Readable, declared: int | None, packed: int, ctx: Context,
                what: str, name: str = "") -> tuple[str, bytes | None]:
    """Digest and (when small enough) the bytes of one member, read in chunks: a member
    that expands past its declared size, the budget or MAX_RATIO is refused as a bomb."""
    _check_ratio(declared or 0, packed, what)
    digest, kept, total = hasher(name), [], 0
    while chunk := stream.read(CHUNK):
        total += len(chunk)
        if declared is not None and total > declared:
            raise Unsafe(f"{what} holds more than its declared {declared} bytes")
        _check_ratio(total, packed, what)
        ctx.budget.take(len(chunk), what)
        digest.update(chunk)
        if total <= MAX_MEMBER:
            kept.append(chunk)
    return digest.hexdigest(), b"".join(kept) if total <= MAX_MEMBER else None


def _check_ratio(size: int, packed: int, what: str) -> None:
    if size > BOMB_FLOOR and size > MAX_RATIO * max(packed, 1):
        raise Unsafe(f"{what} expands over {MAX_RATIO}x ({packed} to {size}+ bytes): a compression bomb")


def compare_members(fmt: str, a: list[Member], b: list[Member], ctx: Context,
                    header: Iterable[str] = ()) -> Inside:
    """`header`: archive-level metadata that differs (a zip comment, a gzip header field)."""
    keyed_a, keyed_b = _keyed(a), _keyed(b)
    metadata, identical = list(header), 0
    notes: list[str] = []
    alone = [(key, "first") for key in keyed_a.keys() - keyed_b.keys()] + \
        [(key, "second") for key in keyed_b.keys() - keyed_a.keys()]
    differing = [key[0] for key, _ in alone]
    details = [f"{key[0]}: only in the {which} variant" for key, which in alone]
    for key in [k for k in keyed_a if k in keyed_b]:
        x, y = keyed_a[key], keyed_b[key]
        metadata += [label for (label, value), (_, other) in zip(x.meta, y.meta) if value != other]
        inner = _content(x, y, ctx)
        metadata += inner.metadata if inner else ()
        if inner is None or not inner.content_differs:
            identical += 1
        else:
            differing += [f"{x.name}/{m}" for m in inner.members] or [x.name]
            details.append(f"{x.name}: {inner.format}: {inner.summary}")
            details += [f"  {line}" for line in inner.details]
        notes += inner.notes if inner else ()
    if [k for k in keyed_a if k in keyed_b] != [k for k in keyed_b if k in keyed_a]:
        metadata.append("member order")
    return _result(fmt, differing, identical, list(dict.fromkeys(metadata)), details, tuple(notes))


def _keyed(members: list[Member]) -> dict[tuple[str, int], Member]:
    """A name may occur twice in an archive: the nth occurrence is matched with the nth."""
    seen: Counter[str] = Counter()
    keyed = {}
    for member in members:
        keyed[(member.name, seen[member.name])] = member
        seen[member.name] += 1
    return keyed


def _content(x: Member, y: Member, ctx: Context) -> Inside | None:
    """None: same content. Else what the nested comparators say about the two contents."""
    if x.kind == y.kind and x.digest == y.digest:
        return None
    if x.kind != y.kind or x.kind != "file":
        return Inside(x.kind if x.kind == y.kind else "type", f"{x.kind} {x.digest!r} vs {y.kind} {y.digest!r}")
    if x.data is None or y.data is None:
        return Inside("bytes", f"contents differ (over {MAX_MEMBER >> 20} MiB: compared by digest only)")
    return compare_bytes(x.data, y.data, ctx.inner(x.name))


def _result(fmt: str, differing: list[str], identical: int, metadata: list[str], details: list[str],
            notes: tuple[str, ...]) -> Inside:
    same = f"{identical} member{'s' if identical != 1 else ''} identical in content"
    if differing:
        count = f"{len(differing)} member{'s differ' if len(differing) != 1 else ' differs'}"
        summary = f"{count} in content ({listed(differing)}); {same}"
        if metadata:
            summary += f"; also {', '.join(metadata)} {differ(metadata)}"
        return Inside(fmt, summary, False, tuple(differing), identical, tuple(metadata), tuple(details), notes)
    layout = only_metadata(fmt, same, metadata or ["archive layout or compressed bytes"])
    return msgspec.structs.replace(layout, identical=identical, details=tuple(details), notes=notes)
