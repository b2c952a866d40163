"""faketime: run a command under a frozen clock (libfaketime)."""

from __future__ import annotations

from fuzzer.tools import register

FAKETIME = register("faketime", "faketime", "freezing the clock for one step (stabiliser search)")
FROZEN_AT = "2000-01-01 00:00:00"


def wrap(argv: list[str]) -> list[str]:
    # -f: the clock stands still, so even sub-second timestamps repeat
    return [FAKETIME.require(), "-f", f"@{FROZEN_AT}", *argv]


def wrap_offset(offset: str, argv: list[str]) -> list[str]:
    """The clock runs, shifted by `offset` (+397d, -3650d, +12345678s)."""
    return [FAKETIME.require(), "-f", offset, *argv]
