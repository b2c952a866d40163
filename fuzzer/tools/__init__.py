"""External tools, each wrapped in one module of this package and registered here.

A wrapper declares its tool with `register()`, so `buildfuzz doctor` can list what is
missing and which Debian package brings it. `Tool.problem()` is the one question a caller
(and a test's `needs` marker) asks: None when the tool is usable here, else why not, in one
line. Every caller degrades when a tool is missing; `ToolMissing` carries the hint for the
message and means exit code 2.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Callable

from fuzzer.errors import UsageError


@dataclass(frozen=True)
class Tool:
    name: str
    package: str
    purpose: str
    # What else must hold once the tool is found (ptrace permitted, FUSE present): None, or why not
    probe: Callable[[], str | None] | None = field(default=None, compare=False, repr=False)

    def path(self) -> str | None:
        return shutil.which(self.name)

    def problem(self) -> str | None:
        """None when the tool is usable here, else a one-line reason."""
        if self.path() is None:
            return self.not_found()
        return self.probe() if self.probe else None

    def not_found(self) -> str:
        return f"{self.name} not found; install the Debian package {self.package!r}"

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


def register(name: str, package: str, purpose: str, probe: Callable[[], str | None] | None = None) -> Tool:
    tool = REGISTRY.setdefault(name, Tool(name, package, purpose, probe))
    return tool


def all_tools() -> list[Tool]:
    """Import every wrapper so each registers itself, then list them."""
    from fuzzer.tools import cc, diffoscope, disorderfs, faketime, git, make, ninja, setarch, strace, unshare  # noqa: F401

    return sorted(REGISTRY.values(), key=lambda t: t.name)
