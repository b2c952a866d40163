"""tar archives (plain: the compression around them is `compressed.py`'s), member by member."""

from __future__ import annotations

import tarfile
from typing import BinaryIO

from fuzzer.compare.formats.members import Member, compare_members, read_member, safe_name
from fuzzer.compare.inside import Context, Inside

NAME = "tar"
CONTAINER = True
PAX_NAMES = {"path", "linkpath", "size", "uid", "gid", "uname", "gname", "mtime"}  # shown under their own labels


def sniff(name: str, head: bytes) -> bool:
    return head[257:262] == b"ustar" or (name.endswith(".tar") and len(head) >= 512 and _v7_checksum(head))


def compare(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    # "r:" reads plain tar only: a compressed member was unwrapped (and bounded) by compressed.py
    with tarfile.open(fileobj=a, mode="r:") as ta, tarfile.open(fileobj=b, mode="r:") as tb:
        return compare_members(NAME, _members(ta, ctx), _members(tb, ctx), ctx)


def members(stream: BinaryIO, ctx: Context) -> list[Member]:
    with tarfile.open(fileobj=stream, mode="r:") as archive:
        return _members(archive, ctx)


def _members(archive: tarfile.TarFile, ctx: Context) -> list[Member]:
    return [_member(archive, info, ctx) for info in archive]


def _member(archive: tarfile.TarFile, info: tarfile.TarInfo, ctx: Context) -> Member:
    name = safe_name(info.name.removeprefix("./") or ".", NAME)
    pax = {k: v for k, v in info.pax_headers.items() if k not in PAX_NAMES}
    meta = (("tar member mtimes", info.mtime), ("tar member modes", info.mode),
            ("tar member owners", (info.uid, info.gid, info.uname, info.gname)), ("tar pax headers", pax))
    if info.isfile():
        stream = archive.extractfile(info)
        assert stream is not None  # a regular file's member always has one
        digest, data = read_member(stream, info.size, info.size, ctx, f"tar member {name!r}", name)
        return Member(name, "file", digest, data, meta)
    if info.issym() or info.islnk():
        return Member(name, "symlink" if info.issym() else "hardlink", info.linkname, meta=meta)
    kind = "dir" if info.isdir() else "other"
    return Member(name, kind, f"{info.type!r} {info.devmajor}:{info.devminor}" if kind == "other" else "", meta=meta)


def _v7_checksum(head: bytes) -> bool:
    """An old tar without the ustar magic: its header checksum must add up."""
    try:
        stored = int(head[148:156].split(b"\0")[0].strip() or b"-1", 8)
    except ValueError:
        return False
    return stored == sum(head[:148]) + 8 * 32 + sum(head[156:512])
