"""Which language a replayed process runs, from its argv and the first bytes of what it
executes: a Python interpreter (`python3 gen.py`, `python -m mod`, a script with a python
shebang) can be traced line by line; the line search says why not for anything else
(a Perl script, a compiled program) and for an interpreter that would not load the tracer
(-I, -E: no PYTHONPATH; -S: no sitecustomize)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from fuzzer.interpreters import is_python, python_call

# other interpreters, by their program's name: the script is their first argument that is no option
INTERPRETERS = {"perl": "perl", "ruby": "ruby", "node": "node", "tclsh": "tcl", "sh": "shell", "bash": "shell",
                "dash": "shell"}
ISOLATING = {"I": "-I (isolated: PYTHONPATH ignored)", "E": "-E (PYTHONPATH ignored)",
             "S": "-S (no site module: no sitecustomize)"}


@dataclass(frozen=True)
class Program:
    language: str  # "python", "perl", "shell", "compiled", or what the shebang names
    path: str  # what it executes: the script, or the program itself
    problem: str = ""  # why a Python program cannot be traced ("" when it can)


def program(argv: tuple[str, ...], cwd: str, env: dict[str, str]) -> Program:
    executable = _found(argv[0], cwd, env) if argv else ""
    name = os.path.basename(argv[0] if argv else "")
    if is_python(name):
        return _python(argv[1:], executable, cwd)
    language = INTERPRETERS.get(name.rstrip("0123456789."))
    if language:
        return Program(language, next((a for a in argv[1:] if not a.startswith("-")), executable))
    head = _head(executable)
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n")[0].decode("utf-8", "replace").split()
        names = [os.path.basename(w) for w in words[:2]]
        interpreter = names[1] if names[:1] == ["env"] and len(names) > 1 else (names[0] if names else "")
        if is_python(interpreter):
            flags = words[2 if names[:1] == ["env"] else 1:]
            return _python(tuple(flags), executable, cwd, script=executable)
        return Program(INTERPRETERS.get(interpreter.rstrip("0123456789."), interpreter or "script"), executable)
    if head.startswith(b"\x7fELF"):
        return Program("compiled", executable)
    return Program("unknown", executable or (argv[0] if argv else ""))


def _python(args: tuple[str, ...], executable: str, cwd: str, script: str = "") -> Program:
    """`args`: the interpreter's arguments (a shebang's flags, then nothing more of interest)."""
    call = python_call(args)
    problems = "; ".join(ISOLATING[letter] for letter in dict.fromkeys(call.letters) if letter in ISOLATING)
    if not script and call.mode == "-m":
        script = call.target
    elif not script and call.mode == "script":
        script = os.path.join(cwd, call.target)
    return Program("python", script or executable, problems)


def _found(name: str, cwd: str, env: dict[str, str]) -> str:
    if "/" in name:
        return os.path.join(cwd, name)
    return shutil.which(name, path=env.get("PATH", os.defpath)) or ""


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(256)
    except OSError:
        return b""
