"""What a Python interpreter's command line runs, read from its argv: the interpreter's own
options, then `-c` code, a `-m` module or a script, then the program's arguments; and that
command said in words a packager knows (`shown_command`), where the argv itself is
unreadable: pip runs setup.py as `python3 -u -c '<40 lines of shim>' bdist_wheel -d DIR`
and a PEP 517 hook as `python3 …/site-packages/pip/_vendor/…/_in_process.py build_wheel
DIR`. Only the display changes: the JSON report and `--verbose` keep the exact argv."""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass

PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
TAKES_VALUE = "cmWXQ"  # options whose value is the rest of the word or the next word
LONG_TAKES_VALUE = ("--check-hash-based-pycs",)
# the hooks PEP 517 and PEP 660 name: a frontend's hook runner takes one as its first argument
PEP517_HOOKS = frozenset({
    "build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel", "get_requires_for_build_sdist",
    "get_requires_for_build_editable", "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable",
})
PACKAGE_DIRS = ("site-packages", "dist-packages")
SHORT_CODE = 60  # -c code this long on one line reads as it is


@dataclass(frozen=True)
class PythonCall:
    """A Python interpreter's arguments (its argv without argv[0]), read as it reads them."""

    letters: str  # its one-letter options, values left out (`-uX dev` → "uX")
    options: tuple[str, ...]  # the words of those options, values included, but not -c's code or -m's module
    mode: str  # "-c", "-m", "script", or "" (nothing to run: stdin, `-`, a REPL)
    target: str  # the code, the module or the script
    args: tuple[str, ...]  # the program's own arguments


def is_python(program: str) -> bool:
    return bool(PYTHON.match(os.path.basename(program)))


def python_call(args: tuple[str, ...]) -> PythonCall:
    letters, i = "", 0
    while i < len(args) and args[i].startswith("-") and args[i] not in ("-", "--"):
        at, word, i = i, args[i], i + 1
        if word.startswith("--"):
            i += word in LONG_TAKES_VALUE
            continue
        taker = next((n for n, letter in enumerate(word[1:], 1) if letter in TAKES_VALUE), len(word))
        letters += word[1:taker]
        value = word[taker + 1:]
        if taker < len(word) and not value and i < len(args):
            value, i = args[i], i + 1
        if word[taker:taker + 1] in ("c", "m"):
            return PythonCall(letters, (*args[:at], word[:taker + 1]), f"-{word[taker]}", value, args[i:])
        letters += word[taker:taker + 1]
    options = args[:i]
    rest = args[i + 1:] if args[i:i + 1] == ("--",) else args[i:]
    mode = "script" if rest and rest[0] != "-" else ""
    return PythonCall(letters, options, mode, rest[0] if rest else "", rest[1:])


def shown_command(command: str) -> str:
    """A step's command as a packager reads it: a Python interpreter's unreadable `-c` code or
    hook runner said in words (`python3 -u -c <code naming /src/setup.py> bdist_wheel -d
    DIR`, `python3 _in_process.py build_wheel DIR (pip's PEP 517 hook runner)`); any other
    command, a shell line included, as it is."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if not argv or shlex.join(argv) != command or not is_python(argv[0]):
        return command  # a recipe's shell line: its words are not one process's argv
    return shown_argv(tuple(argv)) or command


def shown_argv(argv: tuple[str, ...]) -> str:
    """`shown_command` of a Python interpreter's argv; "" where it reads well as it is."""
    call = python_call(argv[1:])
    interpreter = os.path.basename(argv[0])
    if call.mode == "-c" and not _reads_as_is(call.target):
        return f"{shlex.join([interpreter, *call.options])} {_code_words(call.target)}{_joined(call.args)}"
    hook = call.args[0] if call.mode in ("script", "-m") and call.args and call.args[0] in PEP517_HOOKS else ""
    if not hook:
        return ""
    what = os.path.basename(call.target) if call.mode == "script" else call.target
    runner = f"{_package_of(call.target)}'s" if call.mode == "script" and _package_of(call.target) else "a"
    return f"{shlex.join([interpreter, *call.options, what, *call.args])} ({runner} PEP 517 hook runner)"


def _reads_as_is(code: str) -> bool:
    return "\n" not in code.strip() and len(code.strip()) <= SHORT_CODE


def _code_words(code: str) -> str:
    """`<code naming FILE.py>` where the code names one Python file (pip's setup.py shim
    runs the setup.py it names); else its size and its first statement."""
    named = _python_files_named(code)
    if len(named) == 1:
        return f"<code naming {named[0]}>"
    lines = [line.strip() for line in code.splitlines() if line.strip() and not line.strip().startswith("#")]
    first = lines[0] if lines else ""
    first = first if len(first) <= 40 else first[:39] + "…"
    return f"<{len(lines)} lines of code: {first}>"


def _python_files_named(code: str) -> list[str]:
    """The distinct `*.py` string literals in the code, however deep (a string compiled inside it)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    found = (node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str))
    return list(dict.fromkeys(v for v in found if v.endswith(".py") and "\n" not in v))


def _package_of(script: str) -> str:
    """The installed package a script belongs to (`…/site-packages/pip/_vendor/…` → pip)."""
    parts = script.split("/")
    found = [i for i, part in enumerate(parts[:-2]) if part in PACKAGE_DIRS]
    return parts[found[-1] + 1] if found else ""


def _joined(args: tuple[str, ...]) -> str:
    return " " + shlex.join(args) if args else ""
