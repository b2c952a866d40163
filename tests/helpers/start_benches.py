"""Starts each bench given as `python BENCH --help` would, one after the other in this one
interpreter, and prints {bench: [exit code, stderr]} as JSON.

One interpreter pays for Python's start and the shared imports (fuzzer, msgspec, ...) once
instead of once a bench. Each bench still sees what its own start would: sys.argv, and
sys.path with its directory first; the modules of bench/ and tests/ it imported are
forgotten after it, so no bench finds a helper only because another bench loaded it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL = tuple(f"{ROOT / d}{os.sep}" for d in ("bench", "tests"))  # the modules forgotten after each bench


def start(bench: str, base_path: list[str]) -> tuple[int, str]:
    sys.argv = [bench, "--help"]
    sys.path[:] = [os.path.dirname(bench), *base_path]
    before = set(sys.modules)
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            runpy.run_path(bench, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
    except Exception:  # as the interpreter reports what nobody caught
        err.write(traceback.format_exc())
        code = 1
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None) or ""
        if path.startswith(LOCAL):
            del sys.modules[name]
    return code, err.getvalue()


if __name__ == "__main__":
    base = sys.path[1:]  # without this script's own directory
    print(json.dumps({os.path.basename(b): start(os.path.abspath(b), base) for b in sys.argv[1:]}))
