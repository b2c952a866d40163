"""setarch -R: run a command with address-space layout randomisation disabled."""

from __future__ import annotations

import functools
import platform
import subprocess

from fuzzer.tools import register


@functools.cache
def _personality() -> str | None:
    """None when the kernel lets us change personality (some sandboxes forbid it)."""
    probe = subprocess.run([SETARCH.require(), platform.machine(), "-R", "true"], capture_output=True)
    return None if probe.returncode == 0 else "setarch -R is not usable"


SETARCH = register("setarch", "util-linux", "disabling ASLR for one step (stabiliser search)",
                   probe=lambda: _personality())


def wrap(argv: list[str]) -> list[str]:
    return [SETARCH.require(), platform.machine(), "-R", *argv]
