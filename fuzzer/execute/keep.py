"""Keeping what a traced build removes (see native/keep.c), so a replay can put it back.

A step that read a file another step removed before the build ended (pip's backend hook
reading the `input.json` pip deletes with its temporary directory, a configure check's
source) cannot be replayed on the final tree. During a traced build a preloaded library
hard-links every regular file the build unlinks or renames over into a stash directory
(one in the campaign's logs, one in the build's temporary directory: a link works only
within one filesystem), up to CAP_BYTES in all. A link costs no copy and shows in the
trace only under the stash's name, which the trace reader drops (`fuzzer.trace.paths`).
After the build the kept files are moved next to its trace, named by digest, with an
index of (when kept, original absolute path, digest); the stash directories are removed.
Once the trace is read, only the versions some process read before they were removed
are kept (`selected`). Replays run with the environment as traced, the library in it:
its copy stays in the stash, the byte count does not, and without it the library keeps
nothing (a replay's removals are its own). A static binary (Go, a static busybox) bypasses the library: what
it removes is not kept, and a step reading it stays not replayable.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from fuzzer.tools import cc
from fuzzer.trace.paths import KEPT

SOURCE = Path(__file__).parent.parent / "native" / "keep.c"
ENV = "BUILDFUZZ_KEEP"
CAP_BYTES = 64 * 1024 * 1024  # kept per traced build, in all
STASH = KEPT  # in every path the library touches; the trace reader drops them
INDEX = "index.json"
LIBRARY = "keep.so"
COUNT = "bytes"  # the bytes kept so far, 8 bytes the library updates under a lock

Entry = tuple[float, str, str, float]  # when kept (realtime clock), original absolute path, digest, its mtime (s)


def problem() -> str | None:
    built = cc.shared_library(SOURCE)
    return built if isinstance(built, str) else None


def kept_dir(trace_path: str | os.PathLike) -> Path:
    """Where the files a traced build removed are kept, beside its trace."""
    return Path(trace_path).with_suffix(".kept")


def open_stash(trace_path: str, env: dict[str, str]) -> tuple[Path, ...]:
    """Fresh stash directories for one traced build: beside its trace, and in its TMPDIR
    when that is on another filesystem (a link cannot cross one)."""
    first = Path(trace_path).with_name(STASH + Path(trace_path).stem)
    shutil.rmtree(first, ignore_errors=True)
    first.mkdir(parents=True)
    (first / COUNT).write_bytes(bytes(8))  # the library keeps only while it is there
    tmp = Path(env.get("TMPDIR") or tempfile.gettempdir())
    if not tmp.is_dir() or tmp.stat().st_dev == first.stat().st_dev:
        return (first,)
    return (first, Path(tempfile.mkdtemp(prefix=STASH, dir=tmp)))


def environment(stash: tuple[Path, ...], env: dict[str, str]) -> dict[str, str]:
    """`env` with the library preloaded and told where to keep files. The library is loaded
    from a copy in the stash, so no step's trace shows it read."""
    library = stash[0] / LIBRARY
    shutil.copyfile(cc.shared_library(SOURCE), library)
    preload = " ".join(p for p in (str(library), env.get("LD_PRELOAD", "")) if p)
    return {**env, "LD_PRELOAD": preload, ENV: ":".join([str(CAP_BYTES), *map(str, stash)])}


def settle(stash: tuple[Path, ...], trace_path: str) -> None:
    """Move what the build kept beside its trace, by digest; remove the stash directories
    but the library's copy: a replay runs with the environment as traced, the library
    preloaded from there, and without the byte count it keeps nothing."""
    into = kept_dir(trace_path)
    shutil.rmtree(into, ignore_errors=True)
    entries: list[Entry] = []
    try:
        index = (stash[0] / "index").read_text(errors="surrogateescape").splitlines()
    except OSError:
        index = []
    for line in index:
        fields = line.split("\t")
        if len(fields) != 3 or not Path(fields[1]).is_file():
            continue
        digest, modified = _digest(Path(fields[1])), Path(fields[1]).stat().st_mtime_ns / 1e9
        into.mkdir(parents=True, exist_ok=True)
        if not (into / digest).exists():
            shutil.move(fields[1], into / digest)  # a rename on one filesystem
        entries.append((float(fields[0]), fields[2], digest, modified))
    if entries:
        (into / INDEX).write_text(json.dumps(entries, ensure_ascii=False))
    for left in stash[0].iterdir():
        if left.name != LIBRARY:
            left.unlink()
    for directory in stash[1:]:
        shutil.rmtree(directory, ignore_errors=True)


def entries(trace_path: str | os.PathLike) -> list[Entry]:
    """What a traced build kept, in the order it removed them ([] when nothing was kept)."""
    try:
        loaded = json.loads((kept_dir(trace_path) / INDEX).read_text())
    except (OSError, ValueError):
        return []
    return [(float(t), str(p), str(d), float(m)) for t, p, d, m in loaded]


def select(trace_path: str | os.PathLike, wanted: set[str]) -> None:
    """Keep only the kept files whose digests are `wanted` (some process read them)."""
    into = kept_dir(trace_path)
    left = [e for e in entries(trace_path) if e[2] in wanted]
    for blob in into.iterdir() if into.is_dir() else ():
        if blob.name != INDEX and blob.name not in wanted:
            blob.unlink()
    if left:
        (into / INDEX).write_text(json.dumps(left, ensure_ascii=False))
    else:
        shutil.rmtree(into, ignore_errors=True)


def _digest(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()

