"""Whether a tree names its own absolute path: a configured tree does (autotools'
`config.status` and Makefiles, fossil's Makefile from autosetup, CMake's caches), and a copy
of it elsewhere still reads, includes and reconfigures from the original, so a patch to the
copy is not what builds (`fix/proof.py` builds the patched copy at the tree's own path)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

LARGEST = 4 << 20  # bytes: larger files (archives, objects) are not read
SKIPPED = frozenset({".git", ".hg", ".svn"})  # a repository's own store names no build path


def naming_itself(tree: Path, exclude: frozenset[Path] = frozenset()) -> Path | None:
    """The first file (or symlink) of `tree`, relative to it, whose contents (or target) name
    `tree`'s absolute path, a path under it or the tree itself; None when none does."""
    named = re.compile(re.escape(os.fsencode(tree)) + rb"(?![\w.+-])")
    for path in _files(tree, exclude):
        if path.is_symlink():
            hit = named.search(os.fsencode(os.readlink(path))) is not None
        else:
            hit = path.stat().st_size <= LARGEST and named.search(path.read_bytes()) is not None
        if hit:
            return path.relative_to(tree)
    return None


def _files(tree: Path, exclude: frozenset[Path]) -> Iterator[Path]:
    for top, dirs, files in os.walk(tree):  # a symlink to a directory is listed in `dirs`, never walked
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and Path(top, d) not in exclude)
        for name in sorted(files + [d for d in dirs if Path(top, d).is_symlink()]):
            path = Path(top, name)
            if path.is_symlink() or path.is_file():
                yield path
