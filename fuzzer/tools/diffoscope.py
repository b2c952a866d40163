"""diffoscope: the deep, structured view of two differing artifacts, when installed.

It picks its comparators from file names as well as contents, so it is given the
variants under their real names (linked into a temporary directory of ours, removed
after), and its reports are written to files for the JSON report to point at, bounded by
`--max-report-size` and a timeout: a diffoscope page can run to megabytes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzzer.tools import register

DIFFOSCOPE = register("diffoscope", "diffoscope", "structured diffs of differing artifacts")
MAX_REPORT_SIZE = 4 << 20  # bytes per report; diffoscope cuts what is over and says so in it


@dataclass(frozen=True)
class Reports:
    files: tuple[str, ...]  # the reports written (.html, .txt)
    note: str = ""  # why there is none, or why it is cut short


def write_reports(a: str, b: str, name: str, labels: tuple[str, str], out: Path, timeout: float,
                  limit: str = "--diff-timeout") -> Reports:
    """diffoscope's HTML and text reports of `a` and `b`, shown as `labels[i]/name`, into
    `out/<name>.html` and `.txt`, within `timeout` (`limit` names where it came from).
    Nothing is written when diffoscope is missing."""
    if DIFFOSCOPE.problem() is not None:
        return Reports((), "")
    out.mkdir(parents=True, exist_ok=True)
    stem = out / name.replace("/", "__").lstrip(".")
    html, text = stem.with_name(stem.name + ".html"), stem.with_name(stem.name + ".txt")
    with tempfile.TemporaryDirectory(prefix="buildfuzz-diffoscope-") as tmp:
        pair = [_named(src, Path(tmp) / label / Path(name).name) for src, label in zip((a, b), labels)]
        args = ["--no-progress", "--max-report-size", str(MAX_REPORT_SIZE), "--html", str(html), "--text", str(text),
                *map(str, pair)]
        code, stderr = _run(args, tmp, timeout)
    if code is None:
        return Reports(_written(html, text), f"diffoscope ran out of time after {timeout:g} s ({limit})")
    if code not in (0, 1):  # 1 means "they differ", the expected answer here
        return Reports(_written(html, text), f"diffoscope failed (exit {code}): {stderr[-200:]}")
    return Reports(_written(html, text))


def _run(args: list[str], cwd: str, timeout: float) -> tuple[int | None, str]:
    """diffoscope in a session of its own: on timeout the whole group goes (it runs
    objdump, readelf, xz ... as children), nothing is left running. None: timed out."""
    proc = subprocess.Popen([DIFFOSCOPE.require(), *args], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, ""
    return proc.returncode, stderr.decode(errors="replace").strip()


def _named(source: str, target: Path) -> Path:
    """The variant under its real name: a hard link where the file system allows, else a copy."""
    target.parent.mkdir(parents=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    return target


def _written(*paths: Path) -> tuple[str, ...]:
    return tuple(str(p) for p in paths if p.is_file() and p.stat().st_size)
