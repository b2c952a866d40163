"""The comparator registry: one module per format, tried in this order on the first bytes.

Each module has `NAME`, `CONTAINER` (it holds members, so nesting depth applies),
`sniff(name, head) -> bool` and `compare(a, b, ctx) -> Inside`. Binary formats come
first, identified by their magic; text last, so that a `.buildinfo`, a `METADATA` or a
`.changes` is compared as text whatever its name.
"""

from __future__ import annotations

from fuzzer.compare.formats import ar, compressed, elf, pyc, tar, text, zip
from fuzzer.compare.formats.comparator import Container, Format

__all__ = ["REGISTRY", "Container", "Format", "sniff"]


REGISTRY: tuple[Format, ...] = (elf, zip, ar, compressed.GZIP, compressed.XZ, compressed.BZIP2, compressed.ZSTD, tar,
                                pyc, text)


def sniff(name: str, head: bytes) -> Format | None:
    """The first comparator that recognises these bytes, or None (compare as bytes)."""
    return next((fmt for fmt in REGISTRY if fmt.sniff(name, head)), None)
