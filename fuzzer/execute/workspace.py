"""The tree a build runs in: a fresh copy of the source at one fixed path per store.

Every run of a campaign (and every replay) builds at the *same* absolute path, so the
build path never varies between runs unless asked. `--in-place` builds in the source
tree itself after the user's clean command, for trees too big to copy.

Special files in the source are never read: a FIFO is recreated (os.mkfifo); a device
node or a socket is not copied (a copy of /dev/zero would fill the disk; a socket has
no content to copy) and is listed in `not_copied`, for the run's log.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.observe import special_kind


class WorkspaceError(Exception):
    pass


@dataclass(frozen=True)
class Workspace:
    source: Path
    path: Path
    clean: str | None = None  # only for in-place builds
    exclude: frozenset[Path] = frozenset()  # absolute paths not copied (e.g. the store)
    # (source-relative path, kind) of each special file the last prepare() did not copy
    not_copied: list[tuple[str, str]] = field(default_factory=list, compare=False, repr=False)

    @property
    def in_place(self) -> bool:
        return self.path == self.source

    def prepare(self) -> Path:
        if self.in_place:
            self._clean_in_place()
        else:
            self.remove()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.not_copied.clear()
            shutil.copytree(self.source, self.path, symlinks=True, ignore=self._ignore, copy_function=self._copy)
        return self.path

    def _copy(self, source: str, target: str) -> None:
        """copytree's copy function for anything but directories and symlinks."""
        st = os.lstat(source)
        kind = special_kind(st.st_mode)
        if kind is None:
            # copy2 keeps mtimes: make compares them, and a copy must not look newer
            # than the generated files a source tarball ships.
            shutil.copy2(source, target)
        elif kind == "fifo":
            os.mkfifo(target, stat.S_IMODE(st.st_mode))
            shutil.copystat(source, target)
        else:
            self.not_copied.append((os.path.relpath(source, self.source), kind))

    def remove(self) -> None:
        if not self.in_place and os.path.lexists(self.path):
            _make_writable(self.path)
            shutil.rmtree(self.path)

    def skipped(self) -> list[str]:
        """Excluded paths relative to the build tree, for the manifest to pass over."""
        return [str(p.relative_to(self.path)) for p in self.exclude if p.is_relative_to(self.path)]

    def _ignore(self, directory: str, names: list[str]) -> set[str]:
        return {n for n in names if Path(directory, n) in self.exclude}

    def _clean_in_place(self) -> None:
        if not self.clean:
            return
        proc = subprocess.run(["/bin/sh", "-c", self.clean], cwd=self.source, capture_output=True)
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise WorkspaceError(f"clean command {self.clean!r} failed ({proc.returncode}): {tail[0]}")


def _make_writable(root: Path) -> None:
    """Builds sometimes leave read-only dirs (Go module caches); rmtree needs write bits."""
    for dirpath, dirnames, _ in os.walk(root):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                try:
                    os.chmod(path, 0o755)
                except OSError:
                    pass
