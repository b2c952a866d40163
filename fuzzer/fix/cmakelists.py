"""A CMake project's CMakeLists.txt files as the remedies read them: each command call with
its arguments and where each one sits, the paths they name (source-relative, CMake's
directory variables put in), and the edits a fix makes there.

A small reader of CMake's command syntax (`name(arg "quoted arg" ${VAR}/x)`, `#` comments),
not an evaluator: variables other than the source and binary directories stay as written,
and a call whose paths need them is not matched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
SOURCE_DIRS = ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR")
TOP_SOURCE_DIRS = ("CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR")
BINARY_DIRS = ("CMAKE_CURRENT_BINARY_DIR",)
TOP_BINARY_DIRS = ("CMAKE_BINARY_DIR", "PROJECT_BINARY_DIR")
# add_custom_command's keywords: a DEPENDS list runs until the next of them
CUSTOM_KEYWORDS = frozenset({"OUTPUT", "COMMAND", "MAIN_DEPENDENCY", "DEPENDS", "BYPRODUCTS", "IMPLICIT_DEPENDS",
                             "WORKING_DIRECTORY", "COMMENT", "DEPFILE", "JOB_POOL", "JOB_SERVER_AWARE", "VERBATIM",
                             "APPEND", "USES_TERMINAL", "COMMAND_EXPAND_LISTS", "DEPENDS_EXPLICIT_ONLY", "CODEGEN",
                             "ALL", "SOURCES"})
SKIPPED_DIRS = frozenset({".git", "CMakeFiles"})


@dataclass(frozen=True)
class Arg:
    word: str  # unquoted
    line: int  # 0-based line of the file
    end: int  # column just after it (after the closing quote of a quoted one)


@dataclass(frozen=True)
class Call:
    file: Path
    directory: str  # the file's directory, source-relative ("." at the top)
    name: str  # lower case: CMake command names are case-insensitive
    args: tuple[Arg, ...]
    first: int  # the line of `name(`
    last: int  # the line of its closing parenthesis

    def words(self) -> list[str]:
        return [a.word for a in self.args]

    def section(self, keyword: str) -> list[Arg]:
        """The arguments after `keyword` up to the next keyword (add_custom_command's lists)."""
        out, inside = [], False
        for arg in self.args:
            if arg.word in CUSTOM_KEYWORDS:
                inside = arg.word == keyword
            elif inside:
                out.append(arg)
        return out

    def commands(self) -> list[list[Arg]]:
        """Each COMMAND's words, keyword included."""
        found: list[list[Arg]] = []
        current: list[Arg] | None = None
        for arg in self.args:
            if arg.word == "COMMAND":
                current = [arg]
                found.append(current)
            elif arg.word in CUSTOM_KEYWORDS:
                current = None
            elif current is not None:
                current.append(arg)
        return found


def project_calls(root: Path, build_dir: str) -> list[Call]:
    """Every call of every CMakeLists.txt under `root` (not in the build directory)."""
    found = []
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and here / d != root / build_dir)
        if "CMakeLists.txt" in files:
            found += calls(here / "CMakeLists.txt", os.path.relpath(here, root))
    return found


def calls(file: Path, directory: str) -> list[Call]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found, at = [], 0
    while m := _next_call(text, at):
        args, end = _arguments(text, m.end())
        found.append(Call(file, directory, m[1].lower(), tuple(args), text.count("\n", 0, m.start()),
                          text.count("\n", 0, end)))
        at = end + 1
    return found


def _next_call(text: str, at: int) -> re.Match | None:
    """The next `name(` at the start of a line's code (comments skipped)."""
    while at < len(text):
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        code = text[at:line_end].split("#", 1)[0]
        m = CALL.match(code.lstrip())
        if m:
            return CALL.match(text, at + len(code) - len(code.lstrip()))
        at = line_end + 1
    return None


def _arguments(text: str, at: int) -> tuple[list[Arg], int]:
    """The arguments from just after `(` to the matching `)`, and where that is."""
    args, depth, i = [], 0, at
    while i < len(text):
        c = text[i]
        if c == "#":
            i = text.find("\n", i) if "\n" in text[i:] else len(text)
        elif c == '"':
            close = i + 1
            while close < len(text) and text[close] != '"':
                close += 2 if text[close] == "\\" else 1
            args.append(Arg(text[i + 1:close], text.count("\n", 0, i), _column(text, close + 1)))
            i = close + 1
        elif c == ")" and depth == 0:
            return args, i
        elif c.isspace():
            i += 1
        else:
            start = i
            while i < len(text) and not text[i].isspace() and text[i] not in '()"#':
                i += 1
            if i == start:  # a nested parenthesis inside the arguments (if() conditions)
                depth += 1 if c == "(" else -1
                i += 1
                continue
            args.append(Arg(text[start:i], text.count("\n", 0, start), _column(text, i)))
    return args, len(text)


def _column(text: str, index: int) -> int:
    return index - (text.rfind("\n", 0, index) + 1)


def expand(word: str, call: Call, build_dir: str, relative_to: str = "binary") -> str:
    """A path argument as a source-relative path, or "" when it needs other variables.
    A relative path is taken in the call's binary directory (OUTPUT) or its source one."""
    binary = os.path.join(build_dir, call.directory)
    replaced = word
    for names, value in ((SOURCE_DIRS, call.directory), (TOP_SOURCE_DIRS, "."), (BINARY_DIRS, binary),
                         (TOP_BINARY_DIRS, build_dir)):
        for name in names:
            replaced = replaced.replace("${" + name + "}", value)
    if "${" in replaced or "$<" in replaced:
        return ""
    if not os.path.isabs(replaced) and not word.startswith("${"):
        replaced = os.path.join(binary if relative_to == "binary" else call.directory, replaced)
    return os.path.normpath(replaced)


def inserted_after(lines: list[str], arg: Arg, text: str) -> str:
    """Line `arg.line` with ` text` written just after the argument."""
    line = lines[arg.line]
    return line[:arg.end] + " " + text + line[arg.end:]


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
