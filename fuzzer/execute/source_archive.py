"""The source tree as one content-addressed archive, for builds on other machines.

The archive holds exactly what the local executor would copy into its workspace: it is
made from such a copy (`Workspace.prepare`: the store left out, FIFOs recreated, device
nodes and sockets not copied and listed), so both executors build the same tree. Its
name is the sha256 of its bytes; a worker fetches and unpacks it once, into a cache
directory named by that digest, and copies every run's workspace from there, as the
local executor copies from the source.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fuzzer.execute.workspace import Workspace


MTIME_NS = "BUILDFUZZ.mtime_ns"  # a PAX record of our own


@dataclass(frozen=True)
class SourceArchive:
    digest: str  # sha256 of `data`
    data: bytes
    not_copied: tuple[tuple[str, str], ...]  # (path, kind) of the special files left out


def pack(source: Path, exclude: frozenset[Path], scratch: Path) -> SourceArchive:
    """Tar what a workspace copy of `source` holds. The copy is made under `scratch`
    (on the client, once per campaign) and removed again."""
    scratch.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="source-", dir=scratch))
    try:
        copy = Workspace(source, staging / "tree", exclude=exclude)
        copy.prepare()
        data = tar_tree(copy.path)
        return SourceArchive(hashlib.sha256(data).hexdigest(), data, tuple(sorted(copy.not_copied)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def tar_tree(tree: Path) -> bytes:
    """Entries in sorted order with the owner left out (the copy a worker makes belongs to
    whoever runs it, as a local copy does), so one tree gives one archive, one digest.
    Each entry carries its mtime in nanoseconds: tar's float mtime keeps ~0.2 µs, and
    make compares what a copy keeps exactly."""
    def anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.pax_headers = {MTIME_NS: str(os.lstat(tree / info.name).st_mtime_ns)}
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(tree, arcname=".", filter=anonymous)
    return buffer.getvalue()


def unpack_once(digest: str, cache: Path, fetch: Callable[[], bytes]) -> Path:
    """The directory holding the unpacked archive `digest`; on first use the archive is
    fetched and unpacked beside its final name, then renamed into place, so a
    half-unpacked tree is never used, even if this process dies midway."""
    final = cache / digest
    if final.is_dir():
        return final
    archive = fetch()
    if hashlib.sha256(archive).hexdigest() != digest:
        raise ValueError(f"source archive damaged in transfer: its sha256 is not {digest}")
    cache.mkdir(parents=True, exist_ok=True)
    partial = cache / f".{digest}.{uuid.uuid4().hex}"
    try:
        extract(archive, partial)
        os.rename(partial, final)
    except OSError:
        if not final.is_dir():  # not another thread's rename winning the race: a real failure
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return final


def extract(archive: bytes, dest: Path) -> None:
    """Unpack a tar we made: files belong to whoever unpacks it (their owners were left out)."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
        tar.extractall(dest, numeric_owner=True, **_trusted())
        for member in tar.getmembers():  # after every file is written: a directory's mtime too
            if MTIME_NS in member.pax_headers:
                ns = int(member.pax_headers[MTIME_NS])
                os.utime(dest / member.name, ns=(ns, ns), follow_symlinks=False)


def _trusted() -> dict:
    """We made the archive: extract modes and links as they are (Python ≥ 3.14 would
    otherwise apply the 'data' filter; before 3.11.4 there is no filter argument)."""
    return {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
