"""zip archives: wheels, jars, eggs. Members through zipfile, each read once in chunks."""

from __future__ import annotations

import struct
import zipfile
from typing import BinaryIO

from fuzzer.compare.formats.members import Member, compare_members, read_member, safe_name
from fuzzer.compare.inside import Context, Inside

NAME = "zip"
CONTAINER = True
EXTENDED_TIMESTAMP = 0x5455  # the "UT" extra field: mtime/atime/ctime, in seconds


def sniff(name: str, head: bytes) -> bool:
    return head.startswith((b"PK\x03\x04", b"PK\x05\x06"))


def compare(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        header = ["zip comment"] if za.comment != zb.comment else []
        return compare_members(NAME, _members(za, ctx), _members(zb, ctx), ctx, header)


def members(stream: BinaryIO, ctx: Context) -> list[Member]:
    with zipfile.ZipFile(stream) as archive:
        return _members(archive, ctx)


def _members(archive: zipfile.ZipFile, ctx: Context) -> list[Member]:
    return [_member(archive, info, ctx) for info in archive.infolist()]


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, ctx: Context) -> Member:
    name = safe_name(info.filename, NAME)
    meta = (("zip entry timestamps", info.date_time), ("zip entry modes", info.external_attr >> 16),
            (_extra_label(info.extra), info.extra), ("zip compression methods", info.compress_type),
            ("zip entry headers", (info.create_system, info.create_version, info.extract_version, info.flag_bits)),
            ("zip entry comments", info.comment))
    if info.is_dir():
        return Member(name, "dir", "", meta=meta)
    with archive.open(info) as stream:
        digest, data = read_member(stream, info.file_size, info.compress_size, ctx, f"zip member {name!r}", name)
    return Member(name, "file", digest, data, meta)


def _extra_label(extra: bytes) -> str:
    """Extra fields mostly carry timestamps (UT); say so when they do."""
    offset = 0
    while offset + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, offset)
        if kind == EXTENDED_TIMESTAMP:
            return "zip extra fields (extended timestamps)"
        offset += 4 + size
    return "zip extra fields"
