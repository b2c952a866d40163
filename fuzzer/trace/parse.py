"""Streaming parser for `strace -f -ttt -y` output (the format `tools.strace.wrap` asks for).

One pass over the file, one line at a time: memory is bounded by the longest line plus
one pending `<unfinished ...>` call per live pid. Lines it does not understand (a
truncated last line, a new strace message) are skipped, never fatal.

Lines are decoded as latin-1 so every byte survives; strace writes paths as C-escaped
strings, which `decode_string` turns back into bytes and then into `os.fsdecode` text,
the same `str` Python itself would use for that file name.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

# pid, time and, on a line that starts a call, its name; on one that resumes a call, its name
HEAD = re.compile(r"(\d+) +(\d+\.\d+) (?:([a-z_0-9]+)\(|<\.\.\. ([a-z_0-9]+) resumed>)?")
UNFINISHED = " <unfinished ...>"
# `) = 3</abs/path>`, `) = -1 ENOENT (No such file or directory)`, `) = ?`
RESULT = re.compile(
    r"\) += (?P<ret>-?\d+|\?|0x[0-9a-fA-F]+)(?:<(?P<ann>[^<>]*)>)?"
    r"(?: (?P<errno>E[A-Z0-9]+))?(?: \([^()]*\))?\s*"
)
EXITED = re.compile(r"\+\+\+ exited with (\d+) \+\+\+")
KILLED = re.compile(r"\+\+\+ killed by (SIG[A-Z0-9]+)")
# Argument text as tokens: runs of quoted strings (may hold commas and brackets), fd
# annotations, comments and plain text, and single characters (commas, brackets). A lone
# `"` is an unterminated string, a lone `<` an unterminated fd annotation (strace escapes
# `<` and `>` inside one): either way the line was cut short. Runs keep the loop below to
# about two tokens an argument.
ARG_TOKEN = re.compile(r'(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"(?:\.\.\.)?|<[^<>]*+>|/\*.*?\*/|[^",<\[\]{}()/]++|/)++|.', re.DOTALL)
OPENERS = frozenset("[{(")
CLOSERS = frozenset("]})")
STRUCTURE = OPENERS | CLOSERS | {'"', "<"}
ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{2})|(.))", re.DOTALL)
SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "a": "\a", "b": "\b", "e": "\x1b"}
FD_ANNOTATION = re.compile(r"(?:-?\d+|AT_FDCWD)<(.*)>", re.DOTALL)
DELETED = " (deleted)"


class Syscall(NamedTuple):
    """One completed syscall. `args` are the raw argument texts (strings still quoted).

    Records are tuples: a build's trace has millions, and a tuple is made three times
    faster than a frozen dataclass."""

    pid: int
    time: float
    name: str
    args: tuple[str, ...]
    result: int | None
    errno: str | None
    result_path: str | None  # `-y` path of a returned fd: `= 3</abs/path>`

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result >= 0


class Exit(NamedTuple):
    """`+++ exited with N +++` (code) or `+++ killed by SIGX +++` (signal)."""

    pid: int
    time: float
    code: int | None
    signal: str | None


Record = Syscall | Exit


def parse_trace(path: str | os.PathLike) -> Iterator[Record]:
    with open(path, encoding="latin-1", newline="\n") as lines:  # latin-1: every byte survives
        yield from parse_lines(lines)


def trace_calls(path: str | os.PathLike) -> Iterator[Call | Exit]:
    """`calls` of a trace file."""
    with open(path, encoding="latin-1", newline="\n") as lines:
        yield from calls(lines)


def parse_lines(lines: Iterable[bytes | str]) -> Iterator[Record]:
    """Records in file order; a call split by `<unfinished ...>` comes out when it resumes,
    stamped with its start time."""
    make = tuple.__new__  # a record without the named tuple's Python-level constructor: half the cost
    for item in calls(lines):
        if type(item) is not tuple:
            yield item
            continue
        pid, time, call = item
        name, _, text = call.partition("(")
        parts = call_parts(text)
        if parts is not None:
            yield make(Syscall, (pid, time, name, *parts))


# A completed call before its text is read: (pid, start time, `name(args) = result`)
Call = tuple[int, float, str]


def calls(lines: Iterable[bytes | str]) -> Iterator[Call | Exit]:
    """Each completed call, a split one joined and stamped with its start, and each exit,
    in file order; the call texts are left for `call_parts` (or a cache of what they mean)."""
    pending: dict[int, tuple[float, str, str]] = {}  # pid → (start, name, the call so far)
    match = HEAD.match
    for raw in lines:
        line = (raw.decode("latin-1") if isinstance(raw, bytes) else raw).rstrip("\n")
        head = match(line)
        if head is None:
            continue
        pid, time, name, resumed = head.groups()
        if name is not None:
            if line.endswith(UNFINISHED):
                pending[int(pid)] = (float(time), name, line[head.start(3) : -len(UNFINISHED)])
            else:
                yield int(pid), float(time), line[head.start(3) :]
        elif resumed is not None:
            started = pending.pop(int(pid), None)
            if started is not None and started[1] == resumed:
                yield int(pid), started[0], started[2] + line[head.end() :]
        elif line.startswith("+++", head.end()):
            pending.pop(int(pid), None)
            if (record := _exit(int(pid), float(time), line[head.end() :])) is not None:
                yield record
        elif line.startswith("<...", head.end()):  # a resumption strace did not name
            pending.pop(int(pid), None)


def _exit(pid: int, time: float, rest: str) -> Exit | None:
    if m := EXITED.match(rest):
        return Exit(pid, time, int(m[1]), None)
    if m := KILLED.match(rest):
        return Exit(pid, time, None, m[1])
    return None  # "+++ superseded by execve +++": the thread lives on as the leader


# Most lines of a build's trace repeat another's text after the pid and time (every program
# loads the same libraries from the same directory): parse each text once. Long lines
# (execve's environment) are seldom repeated and would crowd the cache.
CACHED_CALL_CHARS = 400
CALL_CACHE_SIZE = 1 << 16

# The fast path: a call of up to FLAT_ARGS flat arguments (quoted strings, fd annotations,
# words: most lines of a trace), or execve's string and two string arrays, matched whole by
# one regex. Any other text goes through the general splitter, whose result for these
# shapes is the same (tests/quick/test_trace_fast_path.py holds them to it). `) = ` must
# come once only: otherwise the general splitter decides which one ends the call.
QUOTED = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"(?:\.\.\.)?'
FLAT_ARG = "(" + QUOTED + r"|(?:-?\d+|AT_FDCWD)<[^<>]*+>|[A-Za-z0-9_|=+-]++)"
FLAT_ARGS = 6
RESULT_TEXT = r"\) = (-?\d+|\?|0x[0-9a-fA-F]+)(?:<([^<>]*)>)?(?: (E[A-Z0-9]+))?(?: \([^()]*\))?\s*"
FLAT_CALL = re.compile(
    "(?:" + functools.reduce(lambda inner, _: FLAT_ARG + "(?:, " + inner + ")?", range(FLAT_ARGS - 1), FLAT_ARG)
    + ")?" + RESULT_TEXT
)
STRINGS = r"\[(?:" + QUOTED + "(?:, " + QUOTED + r")*+)?\]"
EXEC_CALL = re.compile("(" + QUOTED + "), (" + STRINGS + "), (" + STRINGS + ")" + RESULT_TEXT)


def _call_parts(text: str) -> tuple[tuple[str, ...], int | None, str | None, str | None] | None:
    """A call's (args, result, errno, result path), None if the line is damaged."""
    if text.count(") = ") != 1:
        return _split_call_parts(text)
    m = FLAT_CALL.fullmatch(text)
    if m is not None:
        groups = m.groups()
        args = groups[: groups.index(None, 0, FLAT_ARGS)] if None in groups[:FLAT_ARGS] else groups[:FLAT_ARGS]
        ret, ann, errno = groups[FLAT_ARGS:]
    elif (m := EXEC_CALL.fullmatch(text)) is not None:
        args, (ret, ann, errno) = m.groups()[:3], m.groups()[3:]
    else:
        return _split_call_parts(text)
    result = None if ret == "?" else int(ret, 0)
    return args, result, errno, _annotation_path(ann) if ann is not None else None


def _split_call_parts(text: str) -> tuple[tuple[str, ...], int | None, str | None, str | None] | None:
    """`_call_parts` of any text: the last `) = ` that ends the line, the arguments split."""
    end = text.rfind(") = ")
    m = RESULT.fullmatch(text, end) if end >= 0 else None
    if m is None:
        # the last ") = " sat inside a path; find the one that ends the line properly
        m = next((r for r in RESULT.finditer(text) if r.end() == len(text)), None)
        if m is None:
            return None
    args = split_args(text[: m.start()])
    if args is None:
        return None
    ret = m["ret"]
    result = None if ret == "?" else int(ret, 0)
    ann = m["ann"]
    path = _annotation_path(ann) if ann is not None else None
    return args, result, m["errno"], path


_cached_call_parts = functools.lru_cache(CALL_CACHE_SIZE)(_call_parts)


def call_parts(text: str, cached: bool = True) -> tuple[tuple[str, ...], int | None, str | None, str | None] | None:
    """A call's (args, result, errno, result path), None if the line is damaged; the short
    texts that repeat are cached unless the caller caches what they mean."""
    return _cached_call_parts(text) if cached and len(text) <= CACHED_CALL_CHARS else _call_parts(text)


def split_args(text: str) -> tuple[str, ...] | None:
    """Split at top-level commas; strings, `<...>` annotations and brackets stay whole.
    None if quotes or brackets do not balance (a damaged line)."""
    if not text:
        return ()
    tokens = ARG_TOKEN.findall(text)
    if not STRUCTURE.intersection(tokens):  # no brackets: runs (never two in a row) and commas
        if len(tokens) % 2 and tokens.count(",") == len(tokens) // 2:  # run, comma, run...
            return tuple(map(str.strip, tokens[::2]))
        return _flat(tokens)
    return split_tokens(tokens)


def split_tokens(tokens: list[str]) -> tuple[str, ...] | None:
    """Arguments from tokens (each a run or a single character); None if unbalanced."""
    parts, current, depth = [], [], 0
    for token in tokens:
        if len(token) == 1:
            if token == "," and depth == 0:
                parts.append("".join(current).strip())
                current = []
                continue
            if token in OPENERS:
                depth += 1
            elif token in CLOSERS:
                depth -= 1
                if depth < 0:
                    return None
            elif token in ('"', "<"):
                return None
        current.append(token)
    if depth:
        return None
    parts.append("".join(current).strip())
    return tuple(parts)


def _flat(tokens: list[str]) -> tuple[str, ...]:
    """The arguments of runs and commas that do not alternate (`a,,b`, `,a`)."""
    parts, current = [], ""
    for token in tokens:
        if token == ",":
            parts.append(current.strip())
            current = ""
        else:
            current = token
    parts.append(current.strip())
    return tuple(parts)


def is_truncated(arg: str) -> bool:
    """strace cut the string at `-s` bytes: `"abc"...`."""
    return arg.endswith('"...')


@functools.lru_cache(maxsize=1 << 16)  # the same paths come back in every process
def decode_string(arg: str) -> str | None:
    """A quoted C string argument → text (`os.fsdecode` of its bytes); None if unquoted."""
    if not arg.startswith('"'):
        return None
    body = arg[1:-4] if arg.endswith('"...') else arg[1:-1]
    return _unescape(body)


def decode_array(arg: str) -> list[str]:
    """`["a", "b"]` → ["a", "b"]; elements that are not strings (a trailing `...`) are dropped."""
    if not (arg.startswith("[") and arg.endswith("]")):
        return []
    items = (decode_string(item) for item in split_args(arg[1:-1]) or ())
    return [item for item in items if item is not None]


@functools.lru_cache(maxsize=1 << 14)  # the same fds (the cwd's, libc's) come back in every process
def fd_path(arg: str) -> str | None:
    """`3</abs/path>` or `AT_FDCWD</cwd>` → "/abs/path"; None for sockets, pipes, bare fds."""
    m = FD_ANNOTATION.fullmatch(arg)
    return _annotation_path(m[1]) if m else None


def _annotation_path(text: str) -> str | None:
    path = _unescape(text).removesuffix(DELETED)
    return path if path.startswith("/") else None


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text if text.isascii() else os.fsdecode(text.encode("latin-1"))
    return os.fsdecode(ESCAPE.sub(_escape_char, text).encode("latin-1"))


def _escape_char(m: re.Match) -> str:
    octal, hexa, char = m.groups()
    if octal is not None:
        return chr(int(octal, 8) & 0xFF)
    if hexa is not None:
        return chr(int(hexa, 16))
    return SIMPLE_ESCAPES.get(char, char)
