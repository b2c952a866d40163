"""disorderfs: a FUSE view of a directory whose entries come back shuffled or reversed."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path
from typing import Iterator

from fuzzer.tools import register

FUSERMOUNT = register("fusermount", "fuse", "unmounting the disorderfs view after a build")
UNMOUNT_PATIENCE_S = 10.0


def _mountable() -> str | None:
    """None when a disorderfs view can be mounted and unmounted here, else why not."""
    if FUSERMOUNT.path() is None:
        return FUSERMOUNT.not_found()
    return None if os.path.exists("/dev/fuse") else "/dev/fuse is missing (no FUSE here)"


DISORDERFS = register("disorderfs", "disorderfs", "directory-order axis (the build tree seen through FUSE)",
                      probe=_mountable)


@contextlib.contextmanager
def mounted(backing: Path, mountpoint: Path, shuffle: bool) -> Iterator[None]:
    order = ["--shuffle-dirents=yes", "--reverse-dirents=no"] if shuffle else ["--reverse-dirents=yes"]
    subprocess.run([DISORDERFS.require(), "-q", *order, str(backing), str(mountpoint)],
                   check=True, capture_output=True, timeout=30)
    try:
        yield
    finally:
        _unmount(mountpoint)


def _unmount(mountpoint: Path) -> None:
    """A build's last process may hold the mount for a moment: retry, then detach lazily,
    so no mount is ever left behind."""
    deadline = time.monotonic() + UNMOUNT_PATIENCE_S
    while subprocess.run([FUSERMOUNT.require(), "-u", str(mountpoint)], capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            subprocess.run([FUSERMOUNT.require(), "-u", "-z", str(mountpoint)], capture_output=True)
            return
        time.sleep(0.1)
