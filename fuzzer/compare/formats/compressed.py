"""Compressed streams (gzip, xz, bzip2, zstd) around one member: unwrapped with a bound,
then compared by the inner format, so `.tar.xz` reads as a tar. gzip's header (mtime,
file name, OS) is compared too: it is the usual metadata-only difference of a `.gz`."""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
from dataclasses import dataclass
from typing import BinaryIO, Callable

import msgspec

from fuzzer.compare.formats.members import Member, Readable, read_member
from fuzzer.compare.inside import MAX_MEMBER, Context, Inside, Unsafe, compare_bytes, only_metadata
from fuzzer.observe import hasher

FNAME, FEXTRA = 0x08, 0x04


def _zstd_reader(stream: BinaryIO) -> BinaryIO:
    import zstandard  # imported here: only .zst members need it

    return zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)


def _gzip_header(data: bytes) -> dict[str, object]:
    flags, mtime, xfl, os_ = struct.unpack_from("<BIBB", data, 3)
    name = b""
    if flags & FNAME:
        start = 10 + (2 + struct.unpack_from("<H", data, 10)[0] if flags & FEXTRA else 0)
        name = data[start:data.find(b"\0", start)]
    return {"gzip header mtime": mtime, "gzip header file name": name, "gzip header flags and OS": (flags, xfl, os_)}


@dataclass(frozen=True)
class Compression:
    NAME: str
    magic: bytes
    suffix: str  # stripped from the name to name the inner member
    reader: Callable[[BinaryIO], Readable]
    header: Callable[[bytes], dict[str, object]] = lambda head: {}
    CONTAINER: bool = True

    def sniff(self, name: str, head: bytes) -> bool:
        return head.startswith(self.magic)

    def compare(self, a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
        head_a, head_b = self.header(a.read(512)), self.header(b.read(512))
        changed = tuple(label for label, value in head_a.items() if head_b.get(label) != value)
        data = [self._unpack(f, ctx) for f in (a, b)]
        if data[0] == data[1]:
            metadata = changed or (f"{self.NAME} compressed bytes",)
            return only_metadata(self.NAME, "decompressed content identical", metadata)
        inner_name = ctx.name.removesuffix(self.suffix) if ctx.name.endswith(self.suffix) else ctx.name
        inner = compare_bytes(data[0], data[1], ctx.inner(inner_name))
        fmt = self.NAME if inner.format in ("bytes", "text") else f"{inner.format}.{self.NAME}"
        metadata = (*changed, *inner.metadata)
        if inner.content_differs or not changed:
            return msgspec.structs.replace(inner, format=fmt, metadata=metadata)
        header_only = only_metadata(fmt, inner.summary.split("; only ")[0], metadata)
        return msgspec.structs.replace(header_only, identical=inner.identical, details=inner.details, notes=inner.notes)

    def members(self, stream: BinaryIO, ctx: Context) -> list[Member]:
        """The one stream inside, unnamed: `data.tar.xz`'s members are the tar's."""
        data = self._unpack(stream, ctx)
        digest = hasher("")
        digest.update(data)
        return [Member("", "file", digest.hexdigest(), data)]

    def _unpack(self, stream: BinaryIO, ctx: Context) -> bytes:
        packed = stream.seek(0, 2)
        stream.seek(0)
        _, data = read_member(self.reader(stream), None, packed, ctx, f"{self.NAME} stream {ctx.name!r}")
        if data is None:
            raise Unsafe(f"{self.NAME} stream {ctx.name!r} decompresses past {MAX_MEMBER >> 20} MiB")
        return data


GZIP = Compression("gz", b"\x1f\x8b", ".gz", lambda s: gzip.GzipFile(fileobj=s), _gzip_header)
XZ = Compression("xz", b"\xfd7zXZ\x00", ".xz", lambda s: lzma.LZMAFile(s))
BZIP2 = Compression("bz2", b"BZh", ".bz2", lambda s: bz2.BZ2File(s))
ZSTD = Compression("zst", b"\x28\xb5\x2f\xfd", ".zst", _zstd_reader)
