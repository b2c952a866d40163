"""ninja: its build graph (`ninja -t graph`), for the steps the build declares ordered, and
its build file's statements (where each output's `build` line is, what it reads)."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from fuzzer.tools import register

NINJA = register("ninja", "ninja-build", "the declared graph of ninja builds (which steps it orders)")
GRAPH_TIMEOUT_S = 60
GRAPH_BYTES = 64 << 20
BUILD = re.compile(r"^build\s+(?P<outputs>.+?)(?<!\$):\s*(?P<rule>\S+)(?P<inputs>.*)$")
VARIABLE = re.compile(r"^\s+(?P<name>\w+)\s*=")
RULE = re.compile(r"^rule\s+(?P<name>\S+)\s*$")
INCLUDE = re.compile(r"^(?:include|subninja)\s+(?P<path>[^\s$]+)\s*$")
DEPFILE_VARIABLES = ("depfile", "deps")


@dataclass(frozen=True)
class Statement:
    """One `build` statement of a build file, as its first line writes it."""

    line: int  # 0-based
    outputs: tuple[str, ...]  # explicit and implicit, as written (variables and escapes unexpanded)
    rule: str
    inputs: str  # everything after the rule on its first line: explicit | implicit || order-only
    depfile: bool  # the statement or its rule keeps a depfile
    continued: bool = False  # it goes on over the next line (`$` at the end)


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


def build_file_name(arguments: list[str]) -> str:
    """The build file ninja reads (its `-f`), relative to where it works."""
    named = [arguments[i + 1] for i, a in enumerate(arguments[:-1]) if a == "-f"]
    named += [a[2:] for a in arguments if a.startswith("-f") and len(a) > 2]
    return named[0] if named else "build.ninja"


def statements(text: str) -> list[Statement]:
    lines = text.splitlines()
    with_depfile = _rules_with_depfile(lines)
    found = []
    for i, line in enumerate(lines):
        m = BUILD.match(line)
        if m is None:
            continue
        own = any((v := VARIABLE.match(following)) and v["name"] in DEPFILE_VARIABLES
                  for following in _indented(lines, i + 1))
        outputs = tuple(w for w in m["outputs"].split() if w != "|")
        found.append(Statement(i, outputs, m["rule"], m["inputs"], own or m["rule"] in with_depfile,
                               line.endswith("$")))
    return found


def statement_lines(arguments: list[str], cwd: str) -> dict[str, tuple[str, int]]:
    """Each output a `build` statement writes literally (no variable, no escape; relative to
    ninja's directory) → (its build file, relative to ninja's directory; the 1-based line
    of the statement), in the build file and every file it includes or subninjas by a
    literal path. An output two statements claim is left out: ninja itself refuses that."""
    where = os.path.join(cwd, directory(arguments))
    found: dict[str, tuple[str, int]] = {}
    claimed_twice: set[str] = set()
    pending, seen = [build_file_name(arguments)], set()
    while pending:
        name = os.path.normpath(pending.pop())
        text = _read(os.path.join(where, name)) if name not in seen else None
        seen.add(name)
        if text is None:
            continue
        pending += [m["path"] for line in text.splitlines() if (m := INCLUDE.match(line))]
        for statement in statements(text):
            for output in (o for o in statement.outputs if "$" not in o):
                output = os.path.normpath(output)
                if output in found:
                    claimed_twice.add(output)
                found[output] = (name, statement.line + 1)
    return {o: at for o, at in found.items() if o not in claimed_twice}


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read(GRAPH_BYTES)
    except OSError:
        return None


def _rules_with_depfile(lines: list[str]) -> set[str]:
    return {m["name"] for i, line in enumerate(lines) if (m := RULE.match(line))
            and any((v := VARIABLE.match(f)) and v["name"] in DEPFILE_VARIABLES for f in _indented(lines, i + 1))}


def _indented(lines: list[str], start: int) -> list[str]:
    end = start
    while end < len(lines) and lines[end][:1] in (" ", "\t"):
        end += 1
    return lines[start:end]
