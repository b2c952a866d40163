"""setarch -R: run a command with address-space layout randomisation disabled."""

from __future__ import annotations

import functools
import platform
import subprocess

from fuzzer.tools import register

SETARCH = register("setarch", "util-linux", "disabling ASLR for one step (stabiliser search)")


@functools.cache
def available() -> bool:
    """setarch exists and the kernel lets us change personality (some sandboxes forbid it)."""
    if not SETARCH.available():
        return False
    probe = subprocess.run([SETARCH.require(), platform.machine(), "-R", "true"], capture_output=True)
    return probe.returncode == 0


def wrap(argv: list[str]) -> list[str]:
    return [SETARCH.require(), platform.machine(), "-R", *argv]
