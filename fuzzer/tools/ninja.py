"""ninja: its build graph (`ninja -t graph`), for the steps the build declares ordered."""

from __future__ import annotations

import os
import subprocess

from fuzzer.tools import register

NINJA = register("ninja", "ninja-build", "the declared graph of ninja builds (which steps it orders)")
GRAPH_TIMEOUT_S = 60
GRAPH_BYTES = 64 << 20


def graph_arguments(build_argv: list[str]) -> list[str] | None:
    """The `-C DIR` / `-f FILE` of a build that is one ninja call; None when it is not one."""
    if not build_argv or os.path.basename(build_argv[0]) not in ("ninja", "samu"):
        return None
    kept, args = [], iter(build_argv[1:])
    for arg in args:
        if arg in ("-C", "-f"):
            kept += [arg, next(args, "")]
        elif arg.startswith(("-C", "-f")) and len(arg) > 2:
            kept.append(arg)
    return kept


def directory(arguments: list[str]) -> str:
    """Where ninja works (its `-C`), relative to where it was started."""
    for i, arg in enumerate(arguments):
        if arg == "-C" and i + 1 < len(arguments):
            return arguments[i + 1]
        if arg.startswith("-C") and len(arg) > 2:
            return arg[2:]
    return "."


def graph(arguments: list[str], cwd: str) -> str | None:
    """The dot text `ninja -t graph` prints (it runs nothing); None where it cannot."""
    path = NINJA.path()
    if path is None:
        return None
    try:
        proc = subprocess.run([path, *arguments, "-t", "graph"], cwd=cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=GRAPH_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0 or len(proc.stdout) > GRAPH_BYTES:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")
