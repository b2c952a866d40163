"""How a job count reaches a build: the `{jobs}` placeholder and the usual env vars."""

from __future__ import annotations

import os
import re

PLACEHOLDER = "{jobs}"

# Variables through which common build systems read their parallelism, so a command
# without {jobs} (a wrapper script, pip, cargo) still sees the perturbed level.
JOB_VARIABLES = ("CMAKE_BUILD_PARALLEL_LEVEL", "MAX_JOBS", "CARGO_BUILD_JOBS", "NPY_NUM_BUILD_JOBS")


def render_command(template: str, jobs: int) -> str:
    return template.replace(PLACEHOLDER, str(jobs))


def parallel_env(jobs: int, base: dict[str, str] | None = None) -> dict[str, str]:
    """The job-count variables for `jobs`, keeping the user's other MAKEFLAGS words."""
    base = os.environ if base is None else base
    kept = [w for w in base.get("MAKEFLAGS", "").split() if not re.fullmatch(r"-?j\d*|--jobs(=\d+)?", w)]
    env = {name: str(jobs) for name in JOB_VARIABLES}
    env["MAKEFLAGS"] = " ".join([f"-j{jobs}", *kept])
    return env
