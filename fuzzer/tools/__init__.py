"""External tools, each wrapped in one module of this package and registered here.

A wrapper declares its tool with `register()`, so `buildfuzz doctor` can list what is
missing and which Debian package brings it. Every caller degrades when a tool is
missing; `ToolMissing` carries the hint for the message and means exit code 2.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from fuzzer.errors import UsageError

STDERR_LINES = 25


@dataclass(frozen=True)
class Tool:
    name: str
    package: str
    purpose: str

    def path(self) -> str | None:
        return shutil.which(self.name)

    def available(self) -> bool:
        return self.path() is not None

    def require(self) -> str:
        path = self.path()
        if path is None:
            raise ToolMissing(self)
        return path


class ToolMissing(UsageError):
    """A tool the user asked for (or that this step needs) is not installed: exit 2 with
    one line naming the Debian package, wherever it is raised. Callers that can do
    without the tool catch it and degrade."""

    def __init__(self, tool: Tool):
        super().__init__(
            f"{tool.name} not found (needed for {tool.purpose}); install the Debian package {tool.package!r}"
        )
        self.tool = tool


REGISTRY: dict[str, Tool] = {}


def register(name: str, package: str, purpose: str) -> Tool:
    tool = REGISTRY.setdefault(name, Tool(name, package, purpose))
    return tool


def run(tool: Tool, args: list[str], *, timeout: float | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run a tool with captured output; stderr is cut to its last lines for messages."""
    proc = subprocess.run([tool.require(), *args], capture_output=True, timeout=timeout, **kwargs)
    stderr = proc.stderr.decode(errors="replace").splitlines()[-STDERR_LINES:]
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, "\n".join(stderr))


def all_tools() -> list[Tool]:
    """Import every wrapper so each registers itself, then list them."""
    from fuzzer.tools import cc, diffoscope, disorderfs, faketime, git, make, ninja, setarch, strace, unshare  # noqa: F401

    return sorted(REGISTRY.values(), key=lambda t: t.name)
