"""The files one step replay needs, away from the traced tree: only those the step looked
at, by content digest, so a host that already holds a file is not sent it again.

A step (or the process of it that is replayed) is given back, in a tree of its own, every
file of the traced tree it read, found by a probe, or saw in a listing (a listed
directory's entries, its subdirectories made empty), and every file it wrote, as the
traced build left them (`fuzzer.execute.step_replay` restores those before each replay).
Their digests, modes and mtimes are the traced run's manifest's. Files outside the tree
(compilers, /usr) are the host's own, as for a build there; files beside the tree
(`../x.deb`) are not sent, so a step that reads one fails its replays, which says so.

`FileCache` keeps the bytes on a host by their content digest (the manifest's); `build_tree` lays a step's tree out
from it. Nothing here knows Dask (fuzzer/execute/dask_executor.py sends, dask_worker.py
receives).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzzer.execute.step_replay import StepCall
from fuzzer.observe import Manifest, has_digest


@dataclass(frozen=True)
class StepFile:
    """One entry of a step's tree: a file by digest, a symlink by target, or a directory."""

    path: str  # relative to the tree
    kind: str  # "file", "symlink", "dir"
    digest: str = ""  # a file's content digest (the manifest's), a symlink's target
    executable: bool = False
    mtime_ns: int = 0


def step_files(call: StepCall, manifest: Manifest) -> tuple[StepFile, ...]:
    """What `call` needs of the traced tree whose manifest is `manifest`, sorted by path."""
    entries, directories = manifest.entries, _directories(manifest)
    wanted: dict[str, StepFile] = {}
    for path in filter(_in_tree, call.listed):
        wanted.update(_listing(path, manifest))
    for path in filter(_in_tree, (*call.looked_at, *call.restored)):
        entry = entries.get(path)
        if entry is not None and entry.kind in ("file", "symlink"):
            wanted[path] = StepFile(path, entry.kind, entry.digest, entry.executable, entry.mtime_ns)
        elif path in directories:  # a probe of a directory: it is there, its files are not read
            wanted.setdefault(path, StepFile(path, "dir"))
    if _in_tree(call.cwd):
        wanted.setdefault(call.cwd, StepFile(call.cwd, "dir"))
    return tuple(wanted[p] for p in sorted(wanted))


def _in_tree(path: str) -> bool:
    return not path.startswith(("/", "../"))


def _directories(manifest: Manifest) -> set[str]:
    found = {"."}
    for path in manifest.entries:
        parts = path.split("/")[:-1]
        found.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return found


def _listing(directory: str, manifest: Manifest) -> dict[str, StepFile]:
    """A directory of the tree with what a listing of it shows: its files and links, and
    its subdirectories (empty); nothing when the tree has no such directory."""
    prefix = "" if directory == "." else directory + "/"
    shown: dict[str, StepFile] = {}
    for path, entry in manifest.entries.items():
        if not path.startswith(prefix) or path.startswith("../"):
            continue
        name, _, deeper = path[len(prefix):].partition("/")
        child = prefix + name
        if deeper:
            shown.setdefault(child, StepFile(child, "dir"))
        elif entry.kind in ("file", "symlink"):
            shown[child] = StepFile(child, entry.kind, entry.digest, entry.executable, entry.mtime_ns)
    if shown:
        shown.setdefault(directory, StepFile(directory, "dir"))
    return shown


def digests(files: tuple[StepFile, ...]) -> dict[str, str]:
    """Digest → one path holding it in the traced tree, for the files to be sent."""
    return {f.digest: f.path for f in reversed(files) if f.kind == "file"}


class FileCache:
    """A host's files by content digest, in one directory; bytes whose digest is not their name
    are refused, so a tree that changed since its manifest cannot slip in."""

    def __init__(self, root: Path):
        self.root = root

    def path(self, digest: str) -> Path:
        return self.root / digest

    def missing(self, wanted: list[str]) -> list[str]:
        return [d for d in wanted if not self.path(d).is_file()]

    def put(self, digest: str, data: bytes) -> None:
        if not has_digest(data, digest):
            raise ValueError(f"the bytes sent for {digest[:12]} are not that file any more")
        self.root.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=self.root, prefix=".incoming-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(scratch, self.path(digest))  # whole or not at all: another task may be putting it too


def build_tree(tree: Path, files: tuple[StepFile, ...], cache: FileCache) -> None:
    """Lay `files` out under `tree` (made), copied from `cache`: a replay writes its outputs in
    place, and the cache must keep the traced bytes."""
    tree.mkdir(parents=True)
    for f in files:
        target = tree / f.path
        if f.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if f.kind == "symlink":
            os.symlink(f.digest, target)
            continue
        shutil.copyfile(cache.path(f.digest), target)
        target.chmod(0o755 if f.executable else 0o644)
        os.utime(target, ns=(f.mtime_ns, f.mtime_ns))  # make and ar compare mtimes


def read_checked(path: Path, digest: str) -> bytes | None:
    """The file's bytes when they still have `digest`; None otherwise (or when it is gone)."""
    try:
        data = None if path.is_symlink() else path.read_bytes()
    except OSError:
        return None
    return data if data is not None and has_digest(data, digest) else None
