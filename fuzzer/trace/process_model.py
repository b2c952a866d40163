"""What the trace says about each process: its accesses, exec chain, lifetime and the
facts that decide whether it can be replayed alone (`fuzzer.trace.processes` builds them).

Access kinds:

  read    opened for reading (or executed)
  probe   existence check: stat/access (readlink too, when traced), or a call failing with
          ENOENT (`found` tells which way it went; a missing file matters for races)
  write   opened for writing, created, truncated, renamed, linked or copied onto
  mkdir   directory created (kept apart: two steps `mkdir -p` the same dir harmlessly)
  delete  unlinked, removed, or renamed away
  list    directory read with getdents64
  stdout  fd 1 or 2 is this file (when the program fstats it, as stdio does, or its fork
          dup'd the file there before exec): whose output a redirect (`gen.py > x`) captured
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import NamedTuple

from fuzzer.tools.make import NAMES as MAKES

WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")


class Access(NamedTuple):
    """Records are tuples: a build has millions, a tuple is made three times faster than a
    frozen dataclass, and one of strings and numbers is no work for the cyclic collector."""

    kind: str  # read | probe | write | mkdir | delete | list | stdout
    path: str
    time: float  # first time this process did it
    last: float  # last time (a file rewritten, a probe repeated)
    found: bool = True  # probes: whether the file existed
    origin: str | None = None  # a write by rename, link or copy: where the content came from


@dataclass(frozen=True, slots=True)
class Process:
    index: int  # position in BuildTrace.processes; pids can be reused in long builds
    pid: int
    parent: int | None  # index of the parent process
    argv: tuple[str, ...]  # last exec's argv (inherited from the parent if it never exec'd)
    execs: tuple[tuple[str, ...], ...]  # argv of each of its own successful execs, in order
    cwd: str  # working directory at its first exec, where its program ran (at its start if it never exec'd)
    start: float
    end: float
    exit_code: int | None
    signal: str | None  # killed by this signal
    accesses: tuple[Access, ...]
    ppid: int | None = None  # the parent's pid
    env: tuple[str, ...] | None = None  # environment of its first exec ("NAME=value"); None: not traced
    # What a replay alone cannot give it back: its standard input came from a pipe (another
    # process fed it), or it talked to the network.
    stdin_pipe: bool = False
    network: str | None = None  # the first address it connected to (AF_INET/AF_INET6)

    @property
    def failed(self) -> bool:
        return self.signal is not None or self.exit_code not in (0, None)


@dataclass(slots=True)
class LiveProcess:
    """A process while the trace is being read."""

    index: int
    pid: int
    parent: int | None
    argv: tuple[str, ...]
    # A clone with CLONE_FS shares its working directory, one with CLONE_FILES its fd table
    # (here: whether fd 0 is a pipe): each is a one-item cell, shared or copied at the clone
    fs: list  # [absolute cwd, or None: not known yet]
    start: float
    start_cwd: str | None = None
    exec_cwd: str | None = None  # the cwd at its first exec: a fork's chdir before exec (cwd=, `cd d && exec`)
    fds: list = field(default_factory=lambda: [False])  # [stdin is a pipe]
    end: float = 0.0
    execs: list[tuple[str, ...]] = field(default_factory=list)
    env: tuple[str, ...] | None = None
    exit_code: int | None = None
    exit_group_code: int | None = None
    signal: str | None = None
    # (kind, path, found) → [first time, last time, origin]: updated in place, frozen into
    # Access records when the process ends
    accesses: dict[tuple[str, str, bool], list] = field(default_factory=dict)
    network: str | None = None

    @property
    def cwd(self) -> str | None:
        return self.fs[0]

    @cwd.setter
    def cwd(self, path: str | None) -> None:
        self.fs[0] = path

    @property
    def stdin_pipe(self) -> bool:
        return self.fds[0]

    @stdin_pipe.setter
    def stdin_pipe(self, piped: bool) -> None:
        self.fds[0] = piped

    @property
    def a_fork_of_make(self) -> bool:
        return not self.execs and bool(self.argv) and os.path.basename(self.argv[0]) in MAKES


@functools.lru_cache(maxsize=1024)
def opened_as(flags: str) -> tuple[str, ...]:
    """The accesses a successful open with these flags makes (a build uses a few flag sets)."""
    if "O_DIRECTORY" in flags:
        return ("probe",)
    if any(flag in flags for flag in WRITE_FLAGS):
        if "O_RDWR" in flags and "O_TRUNC" not in flags:
            return ("read", "write")  # updated in place: old content counts
        return ("write",)
    return ("read",)
