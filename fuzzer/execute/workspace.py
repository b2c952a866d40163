"""The tree a build runs in: a fresh copy of the source at one fixed path per store.

Every run of a campaign (and every replay) builds at the *same* absolute path, so the
build path never varies between runs unless asked. `--in-place` builds in the source
tree itself after the user's clean command, for trees too big to copy.

Special files in the source are never read: a FIFO is recreated (os.mkfifo); a device
node or a socket is not copied (a copy of /dev/zero would fill the disk; a socket has
no content to copy) and is listed in `not_copied`, for the run's log.

Outputs outside the tree: builds such as dpkg-buildpackage write their packages into the
tree's parent. When buildfuzz owns that parent (`parent_outputs`: the campaign's
workspace, a directory of the store that holds nothing but the tree), whatever a build
leaves there is an output, named `../NAME`; and every `--output` directory is one too,
named by its absolute path. Both are emptied before each run, so no run inherits the
last one's packages. The parent's entries named after the tree (`NAME.at-VALUE`, the
build-path axis's mount points; `NAME.disorderfs`, the dirorder axis's backing tree;
`NAME.replays`, step replays' slots) are buildfuzz's own, never outputs, and never emptied
by a run.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.observe import Manifest, special_kind, take_manifest

PARENT = "../"  # how manifests name what a build left in the tree's parent
# fuzzer.axes: NAME.at-VALUE (buildpath), NAME.disorderfs (dirorder); fuzzer.execute.replay_slots: NAME.replays
OWN_SUFFIXES = (".at-", ".disorderfs", ".replays")


class WorkspaceError(Exception):
    pass


@dataclass(frozen=True)
class OutputDir:
    """A directory outside the tree that the build writes into (`--output`)."""

    shown: str  # its absolute path: the prefix of its files' names in manifests and reports
    backing: Path  # where this workspace's builds write it: the directory itself, or a slot's own


def output_dirs(paths) -> tuple[OutputDir, ...]:
    """The `--output` directories of a campaign, each written where it is."""
    return tuple(OutputDir(os.path.abspath(p), Path(os.path.abspath(p))) for p in paths)


@dataclass(frozen=True)
class Workspace:
    source: Path
    path: Path
    clean: str | None = None  # only for in-place builds
    exclude: frozenset[Path] = frozenset()  # absolute paths not copied (e.g. the store)
    parent_outputs: bool = False  # the parent is buildfuzz's: what builds leave there is compared
    outputs: tuple[OutputDir, ...] = ()
    # where builds see their tree too, bound there in their own mount namespace: a patched copy
    # at the user's tree's path, which a configured tree's files name (`include /src/main.mk`)
    seen_at: Path | None = None
    # (source-relative path, kind) of each special file the last prepare() did not copy
    not_copied: list[tuple[str, str]] = field(default_factory=list, compare=False, repr=False)

    @property
    def in_place(self) -> bool:
        return self.path == self.source

    def prepare(self) -> Path:
        self.empty_outputs()
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
        """The tree, and what builds left beside it in buildfuzz's parent: nothing of a run stays."""
        if self.in_place:
            return
        remove_tree(self.path)
        if self.parent_outputs:
            for name in self._parent_outputs():
                _remove_entry(self.path.parent / name)

    def empty_outputs(self) -> None:
        """Remove what earlier builds left outside the tree; a missing --output of a slot is made."""
        if self.parent_outputs and self.path.parent.is_dir():
            for name in self._parent_outputs():
                _remove_entry(self.path.parent / name)
        for output in self.outputs:
            output.backing.mkdir(parents=True, exist_ok=True)
            for entry in os.listdir(output.backing):
                _remove_entry(output.backing / entry)

    def outside_manifest(self) -> Manifest:
        """Every file the last build left outside the tree, under its name in manifests."""
        places: list[tuple[str, Path, list[str] | None]] = \
            [(PARENT, self.path.parent, self._parent_outputs())] if self.parent_outputs else []
        places += [(output.shown.rstrip("/") + "/", output.backing, None) for output in self.outputs]
        entries = {}
        for prefix, directory, names in places:
            if directory.is_dir():
                found = take_manifest(directory, only=names)
                entries.update({prefix + path: entry for path, entry in found.entries.items()})
        return Manifest(entries)

    def compared_places(self) -> list[str]:
        """The absolute directories whose files manifests hold: the tree, its parent when
        buildfuzz owns it, each --output."""
        tree = [str(self.path.parent if self.parent_outputs else self.path)]
        return tree + [output.shown for output in self.outputs]

    def locate(self, path: str) -> Path:
        """The file a manifest's `path` names in this workspace (`../x` is in the parent)."""
        for output in self.outputs:
            prefix = output.shown.rstrip("/") + "/"
            if path.startswith(prefix):
                return output.backing / path[len(prefix):]
        return self.path / path

    def move_parent_outputs(self, dest: Path) -> None:
        """The parent's outputs into `dest`, the parent of a kept copy of the tree."""
        if not self.parent_outputs:
            return
        dest.mkdir(parents=True, exist_ok=True)
        for name in self._parent_outputs():
            if not os.path.lexists(dest / name):
                shutil.move(str(self.path.parent / name), str(dest / name))

    def take_back(self, kept: Path) -> bool:
        """A tree `keep_tree` moved to `kept` (the parent's outputs beside it) back at the
        path, as it was; False when nothing was kept there, or the tree is the source."""
        if self.in_place or not kept.is_dir():
            return False
        self.remove()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(kept), str(self.path))
        if self.parent_outputs:
            for name in os.listdir(kept.parent):
                shutil.move(str(kept.parent / name), str(self.path.parent / name))
        return True

    def _parent_outputs(self) -> list[str]:
        return parent_output_names(self.path)

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


def parent_output_names(tree: Path) -> list[str]:
    """Names in the tree's parent that builds made: all but the tree and buildfuzz's own beside it."""
    try:
        names = os.listdir(tree.parent)
    except FileNotFoundError:
        return []
    own = {n for n in names if n == tree.name or n.startswith(tuple(tree.name + suffix for suffix in OWN_SUFFIXES))}
    return sorted(n for n in names if n not in own and not os.path.ismount(tree.parent / n))


def remove_tree(path: Path) -> None:
    if os.path.lexists(path):
        _make_writable(path)
        shutil.rmtree(path)


def _remove_entry(path: Path) -> None:
    """One entry a build left: a symlink is removed, never followed; a mount point is left."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    elif not os.path.ismount(path):
        _make_writable(path)
        shutil.rmtree(path)


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
