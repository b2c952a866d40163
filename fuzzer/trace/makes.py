"""The make programs a traced build ran. A make runs by name (`make`, found on the PATH of
the process that ran it), by path (`$(MAKE)`, which an older make sets to its own path,
/usr/bin/make), or as the `#!` interpreter of a script (Debian's `debian/rules`, whose
first line is `#!/usr/bin/make -f`): the trace shows that exec as the script's alone, so the
script's first line is read from the source tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fuzzer.tools.make import NAMES as MAKES
from fuzzer.trace.process_model import Process
from fuzzer.trace.steps import BuildTrace


def make_programs(trace: BuildTrace, source: Path) -> dict[str, tuple[str, ...]]:
    """Each make program the build ran (its real path) → the first argv that ran it."""
    found: dict[str, tuple[str, ...]] = {}
    for process in trace.processes:
        for argv in process.execs:
            program = _make_program(argv, process, trace.workspace, source) if argv else None
            if program is not None:
                found.setdefault(program, argv)
    return found


def _make_program(argv: tuple[str, ...], process: Process, workspace: str, source: Path) -> str | None:
    name = argv[0]
    # a process's cwd is workspace-relative ("." its root), or absolute outside it
    path = os.path.normpath(os.path.join(workspace, process.cwd, name)) if "/" in name else None
    if os.path.basename(name) in MAKES:
        path = path or shutil.which(name, path=_path_of(process))
        return os.path.realpath(path) if path else None
    if path is None:  # a program found on PATH: not a script of the tree
        return None
    return _interpreter_make(_in_source(path, workspace, source))


def _path_of(process: Process) -> str | None:
    return next((entry[5:] for entry in process.env or () if entry.startswith("PATH=")), None)


def _in_source(path: str, workspace: str, source: Path) -> Path:
    """A file of the build's tree as the source holds it (the traced tree is gone by now)."""
    relative = os.path.relpath(path, workspace)
    return source / relative if not relative.startswith("..") else Path(path)


def _interpreter_make(script: Path) -> str | None:
    """The make a script's `#!` line names, if it names one."""
    try:
        with script.open("rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    words = first[2:].decode(errors="replace").split() if first.startswith(b"#!") else []
    return os.path.realpath(words[0]) if words and os.path.basename(words[0]) in MAKES else None
