"""make: its version (the prerequisite-order axis needs 4.4) and its database (the declared graph)."""

from __future__ import annotations

import functools
import os
import re
import subprocess

from fuzzer.tools import register

MAKE = register("make", "make", "prerequisite-order axis (--shuffle needs GNU make 4.4 or later)")
SHUFFLE_SINCE = (4, 4)


@functools.cache
def version() -> tuple[int, int] | None:
    path = MAKE.path()
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"GNU Make (\d+)\.(\d+)", out)
    return (int(m[1]), int(m[2])) if m else None


def shuffle_unavailable() -> str | None:
    found = version()
    if found is None:
        return "GNU make not found"
    if found < SHUFFLE_SINCE:
        return f"GNU make {found[0]}.{found[1]} has no --shuffle (it came in 4.4)"
    return None


# --- the database (`make -pn`): the build's declared prerequisites -------------------------

DATABASE_TIMEOUT_S = 60
DATABASE_BYTES = 64 << 20  # a database larger than this is not read (a huge generated build)
JOB_FLAG = re.compile(r"-j\d*|--jobs(=\d+)?|-l[\d.]*|--load-average(=[\d.]+)?|--shuffle(=\S+)?")


def make_arguments(build_argv: list[str]) -> list[str] | None:
    """The make arguments of a build that is one make call (`make -j8 check`), without its
    parallelism flags; None when the build is not one (a script, `./configure && make`)."""
    if not build_argv or os.path.basename(build_argv[0]) not in ("make", "gmake"):
        return None
    return [a for a in build_argv[1:] if not JOB_FLAG.fullmatch(a)]


def database(arguments: list[str], cwd: str) -> str | None:
    """make's database for `make ARGUMENTS` in `cwd`, printed by `make -pn`. Nothing is built
    in a built tree: make runs only the recipe lines that call $(MAKE) (whole, as make
    does under -n; their sub-makes are dry too and print their own databases) and
    $(shell ...) functions. None when make is missing, fails to start, takes too long or
    prints too much."""
    path = MAKE.path()
    if path is None:
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    env["LC_ALL"] = "C"  # "Entering directory" lines are parsed
    try:
        proc = subprocess.run([path, "-pn", "-w", *arguments], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=DATABASE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if len(proc.stdout) > DATABASE_BYTES or b"# Files" not in proc.stdout:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")
