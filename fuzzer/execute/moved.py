"""One traced process run again in fresh directories of its own, to show what its output
owes to the directory it ran in (kind build-path: fuzzer/explain/build_path.py).

Each run gets a new directory (mkdtemp's, as a wrapper makes its own), the files the process read there written back in (`inputs`, its
bytes as the traced build kept them), its argv with the traced directory's name replaced by
the new one's, and `extra` arguments added with `{dir}` standing for it; it runs there with
its traced environment and the digest of the one file compared is taken. The directory is
removed after each run, whatever happened; the runs go through a Guard, as builds do, so a
run that outlives its timeout, or a Ctrl-C, ends every process it started.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzzer.execute.guard import Guard
from fuzzer.observe import hash_file

DIR = "{dir}"


@dataclass(frozen=True)
class MovedCall:
    argv: tuple[str, ...]
    cwd: str  # the absolute directory it ran in, in the traced build
    env: dict[str, str]
    inputs: tuple[tuple[str, bytes], ...]  # (path relative to `cwd`, its bytes) written before each run
    output: str  # the file compared, relative to `cwd`
    timeout: float


def run_moved(call: MovedCall, extra: tuple[str, ...], times: int) -> list[str | None]:
    """The output's digest of each of `times` runs, each in its own fresh directory (None:
    the run failed or wrote no output)."""
    with Guard() as guard:
        return [_once(guard, call, extra) for _ in range(times)]


def _once(guard: Guard, call: MovedCall, extra: tuple[str, ...]) -> str | None:
    where = tempfile.mkdtemp(prefix="buildfuzz-moved-")
    try:
        for relative, data in call.inputs:
            path = Path(where, relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        argv = [a.replace(call.cwd, where) for a in call.argv] + [a.replace(DIR, where) for a in extra]
        output = Path(where, call.output)
        output.parent.mkdir(parents=True, exist_ok=True)  # its wrapper made it (setuptools' build/temp.*)
        return hash_file(str(output)) if _ran(guard, argv, where, call) and output.is_file() else None
    except OSError:
        return None
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _ran(guard: Guard, argv: list[str], where: str, call: MovedCall) -> bool:
    guard.start(argv, cwd=where, env=call.env, cpus=None, log_path=os.devnull)
    return guard.wait(call.timeout).exit_code == 0
