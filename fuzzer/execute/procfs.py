"""/proc, read cheaply: a process's descendants, its state, the whole process table.
Both sides of the guard use it: the guard process to kill its tree, the fuzzer to sweep
what a dead guard left."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Iterable

import psutil

CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")  # CONFIG_PROC_CHILDREN


def descendants(pid: int) -> list[int]:
    """Every descendant of `pid`, parents before children.

    Reads /proc/PID/task/TID/children, which costs O(tree) instead of psutil's O(system);
    it can miss a child while it is being reparented, so callers that must be complete
    (the kill loop) also ask waitpid whether the guard still has children.
    """
    if not CHILDREN_FILES:
        try:
            return [p.pid for p in psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            return []
    found: list[int] = []
    stack = [pid]
    while stack:
        kids = _children(stack.pop())
        found += kids
        stack += kids
    return found


def _children(pid: int) -> list[int]:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tids:  # a child belongs to the thread that forked it
        kids += [int(k) for k in _read(f"/proc/{pid}/task/{tid}/children").split()]
    return kids


def is_zombie(pid: int) -> bool:
    fields = stat_fields(pid)
    return not fields or fields[0] == b"Z"  # gone already counts as dead too


def stat_fields(pid: int) -> list[bytes]:
    """/proc/PID/stat from the state on (the command name before it may hold spaces); [] when gone.

    Indices used: 0 state, 1 ppid, 3 session, 11 utime, 12 stime, 19 start time.
    """
    return _read(f"/proc/{pid}/stat").rpartition(b")")[2].split()


def _read(path: str) -> bytes:
    """A small /proc file, or b"" when its process is gone (os.open: io.open costs 3x)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.read(fd, 65536)
        finally:
            os.close(fd)
    except OSError:
        return b""


def process_table() -> dict[int, tuple[int, int, bytes]]:
    """Every process on the machine: pid → (ppid, session, state)."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (fields := stat_fields(int(name))):
            table[int(name)] = (int(fields[1]), int(fields[3]), fields[0])
    return table


def members(table: dict[int, tuple[int, int, bytes]], seen: set[int], sessions: set[int]) -> set[int]:
    """The live processes among `seen`, in `sessions`, or descending from either.

    A session id stays allocated while any process is in it, so a live member of a session
    the build ran in is the build's (sessions are never joined, only created).
    """
    found = {pid for pid, (_, session, _) in table.items() if session in sessions or pid in seen}
    children = defaultdict(list)
    for pid, (ppid, _, _) in table.items():
        children[ppid].append(pid)
    stack = list(found)
    while stack:
        for child in children[stack.pop()]:
            if child not in found:
                found.add(child)
                stack.append(child)
    return {pid for pid in found if table[pid][2] != b"Z"}


def send_signals(pids: Iterable[int], *signals: int) -> None:
    for pid in pids:
        for sig in signals:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
