"""What the most frequent calls (opens, probes, listings) do to the process making them,
as plain data: the accesses they record and the working directory an `AT_FDCWD`
annotation shows. The same call text means the same thing in every process unless its
path is relative to an unnamed cwd, so a trace's loader lines are read once
(`ProcessTracker.feed_calls`); exec, clone, rename and the rest keep their handlers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fuzzer.trace.parse import Syscall, fd_path
from fuzzer.trace.paths import Location, PathNames
from fuzzer.trace.process_model import opened_as

NOT_FOUND = frozenset({"ENOENT", "ENOTDIR"})
OPENAT2_FLAGS = re.compile(r"flags=([A-Z_0-9|]+)")
STDOUT_FDS = ("1", "2")

AccessKey = tuple[str, str, bool]  # kind, path, found: how a process's accesses are keyed
# (the call names the cwd, the cwd it names or None, the accesses it records)
Effect = tuple[bool, str | None, tuple[AccessKey, ...]]
NO_EFFECT: Effect = (False, None, ())


def failure_probe(errno: str | None, path: str | None) -> tuple[AccessKey, ...]:
    """A failed call still tells whether the path existed."""
    if path is None:
        return ()
    if errno in NOT_FOUND:
        return (("probe", path, False),)
    return (("probe", path, True),) if errno == "EEXIST" else ()


def _opened(call: Syscall, location: Location | None, flags: str) -> Effect | None:
    if location is None:
        return None
    at_cwd, base, path = location
    if not call.ok:
        return at_cwd, base, failure_probe(call.errno, path)
    return at_cwd, base, tuple((kind, path, True) for kind in opened_as(flags)) if path else ()


def _probed(call: Syscall, location: Location | None) -> Effect | None:
    if location is None:
        return None
    at_cwd, base, path = location
    return at_cwd, base, ((("probe", path, call.errno not in NOT_FOUND),) if path else ())


def open_effect(paths: PathNames, cwd: str | None, call: Syscall) -> Effect | None:
    if len(call.args) < 2:
        return NO_EFFECT
    return _opened(call, paths.locate(cwd, call.args[0]), call.args[1])


def openat_effect(paths: PathNames, cwd: str | None, call: Syscall) -> Effect | None:
    if len(call.args) < 3:
        return NO_EFFECT
    flags = call.args[2]
    if call.name == "openat2":
        m = OPENAT2_FLAGS.search(flags)
        flags = m[1] if m else ""
    return _opened(call, paths.locate(cwd, call.args[1], call.args[0]), flags)


def create_effect(paths: PathNames, cwd: str | None, call: Syscall) -> Effect | None:
    """creat(path, mode) and truncate(path, length): a write of the file."""
    if not call.args:
        return NO_EFFECT
    return _opened(call, paths.locate(cwd, call.args[0]), "O_CREAT" if call.name == "creat" else "O_TRUNC")


def stat_effect(paths: PathNames, cwd: str | None, call: Syscall) -> Effect | None:
    return _probed(call, paths.locate(cwd, call.args[0])) if call.args else NO_EFFECT


def statat_effect(paths: PathNames, cwd: str | None, call: Syscall) -> Effect | None:
    if len(call.args) < 2:
        return NO_EFFECT
    if call.args[1] == '""':  # fstat of an open fd: stdio's of fd 1 and 2 says where its output goes
        fd, _, _ = call.args[0].partition("<")
        path = fd_path(call.args[0]) if fd in STDOUT_FDS else None
        printed = path and paths.relative(path)
        return False, None, ((("stdout", printed, True),) if printed else ())
    return _probed(call, paths.locate(cwd, call.args[1], call.args[0]))


def list_effect(paths: PathNames, cwd: str | None, call: Syscall) -> Effect | None:
    path = fd_path(call.args[0]) if call.args else None
    listed = paths.relative(path) if call.ok and path else None
    return False, None, ((("list", listed, True),) if listed else ())


# fstat and stat by *at: the address of the buffer strace does not decode is the one word of
# their text that differs from process to process (ASLR), and it means nothing here
POINTER_BLIND = frozenset({"newfstatat", "fstatat64"})
ADDRESS = re.compile(r"0x[0-9a-f]+")


def pointer_blind(name: str, text: str) -> str | None:
    """`name(dirfd, "path", 0xADDRESS, flags) = result` without its address: the same
    effect for every address. None for any other shape: the address must stand between the
    last quoted string and flags and a result without one."""
    if name not in POINTER_BLIND:
        return None
    pieces = text.rsplit(", ", 2)
    if len(pieces) != 3 or not pieces[0].endswith('"') or '"' in pieces[2] or not ADDRESS.fullmatch(pieces[1]):
        return None
    return f"{name}({pieces[0]}, {pieces[2]}"


EFFECTS: dict[str, Callable[[PathNames, str | None, Syscall], Effect | None]] = {
    "open": open_effect,
    **dict.fromkeys(("openat", "openat2"), openat_effect),
    **dict.fromkeys(("creat", "truncate"), create_effect),
    **dict.fromkeys(("stat", "lstat", "stat64", "lstat64", "access", "readlink"), stat_effect),
    **dict.fromkeys(("newfstatat", "fstatat64", "statx", "faccessat", "faccessat2", "readlinkat"), statat_effect),
    **dict.fromkeys(("getdents64", "getdents"), list_effect),
}
