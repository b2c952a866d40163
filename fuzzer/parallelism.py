"""How a job count reaches a build: the `{jobs}` placeholder and the usual env vars."""

from __future__ import annotations

import os
import re
import shutil
from typing import Mapping

PLACEHOLDER = "{jobs}"

# Variables through which common build systems read their parallelism, so a command
# without {jobs} (a wrapper script, pip, cargo) still sees the perturbed level.
JOB_VARIABLES = ("CMAKE_BUILD_PARALLEL_LEVEL", "MAX_JOBS", "CARGO_BUILD_JOBS", "NPY_NUM_BUILD_JOBS")


# any of these makes a command line shell syntax (also `VAR=x cmd`, globs, quotes)
SHELL_SYNTAX = frozenset("|&;<>()$`\\\"' \t\n*?[]#~=%{}!")


def render_command(template: str, jobs: int) -> str:
    return template.replace(PLACEHOLDER, str(jobs))


def command_argv(command: str) -> list[str]:
    """Run a plain `make -j4` directly; anything using shell syntax through /bin/sh -c.
    Saves a shell per run, and keeps the build driver at the root of the process tree."""
    words = command.split()
    plain = words and not any(ch in SHELL_SYNTAX for word in words for ch in word)
    # a missing program goes through the shell too, for its usual "not found" and exit 127
    return words if plain and shutil.which(words[0]) else ["/bin/sh", "-c", command]


def parallel_env(jobs: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The job-count variables for `jobs`, keeping the user's other MAKEFLAGS words."""
    given: Mapping[str, str] = os.environ if base is None else base
    kept = [w for w in given.get("MAKEFLAGS", "").split() if not re.fullmatch(r"-?j\d*|--jobs(=\d+)?", w)]
    env = {name: str(jobs) for name in JOB_VARIABLES}
    env["MAKEFLAGS"] = " ".join([f"-j{jobs}", *kept])
    return env
