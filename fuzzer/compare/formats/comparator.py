"""What a comparator is, for the registry (`formats.REGISTRY`) and its callers: a module of
this package, or a `compressed.Compression`."""

from __future__ import annotations

from typing import BinaryIO, Protocol, runtime_checkable

from fuzzer.compare.formats.members import Member
from fuzzer.compare.inside import Context, Inside


class Format(Protocol):
    """A comparator: a module of this package, or a `compressed.Compression`."""

    @property
    def NAME(self) -> str: ...

    @property
    def CONTAINER(self) -> bool: ...

    def sniff(self, name: str, head: bytes) -> bool: ...

    def compare(self, a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside: ...


@runtime_checkable
class Container(Format, Protocol):
    """A comparator of archives (`CONTAINER`), whose members can be listed."""

    def members(self, stream: BinaryIO, ctx: Context) -> list[Member]: ...
