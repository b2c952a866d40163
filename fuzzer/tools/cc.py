"""cc: compiles buildfuzz's own small native helper (the step-hold preload library) once
per machine, into a cache keyed by the source's digest."""

from __future__ import annotations

import functools
import hashlib
import subprocess
import tempfile
from pathlib import Path

from fuzzer.model import cache_dir
from fuzzer.tools import register

CC = register("cc", "gcc", "compiling the step-hold library (targeted schedules hold one step back)")
COMPILE_TIMEOUT_S = 60


@functools.cache
def shared_library(source: Path) -> Path | str:
    """The compiled library for `source`, or a one-line reason it cannot be built here."""
    if CC.path() is None:
        return f"no C compiler found; install the Debian package {CC.package!r}"
    if not source.is_file():
        return f"{source} is missing from this installation of buildfuzz"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir() / f"{source.stem}-{digest}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        built = Path(tmp) / target.name
        done = subprocess.run([CC.require(), "-O2", "-shared", "-fPIC", "-o", str(built), str(source)],
                              capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        if done.returncode != 0:
            return f"cc could not build {source.name}: {done.stderr.strip().splitlines()[-1:]}"
        built.replace(target)  # atomic: concurrent campaigns may build it at once
    return target
