"""The names the trace analysis gives paths: inside the workspace relative to it, in its
parent `../NAME` when buildfuzz owns that parent (manifests name its files so), others
absolute; /proc, /sys, /dev and the keep's stash (`KEPT`) dropped (None). A call's path is resolved against the
directory its fd annotation names, or the process's working directory."""

from __future__ import annotations

import functools
import os
import re

from fuzzer.trace.parse import decode_string, fd_path, is_truncated

IGNORED_ROOTS = ("/proc", "/sys", "/dev")
# in every path buildfuzz's keep of removed files touches (fuzzer.execute.keep): not the build's
KEPT = ".buildfuzz-kept-"
PATH_CACHE_LIMIT, AT_CACHE_LIMIT = 200_000, 1 << 16
MOVED = ".at-"  # the build-path axis shows the workspace at WORKSPACE.at-VALUE
# `cwd` when the call is read apart from any process (no real cwd is relative): a path that
# needs the cwd cannot be resolved once for every process that makes the call
UNKNOWN_CWD = "?"
# Where a call's path is: (the call names the working directory: AT_FDCWD, the directory
# its annotation names (None: not named), the path's name (None: cut, empty or ignored))
Location = tuple[bool, str | None, str | None]
NOWHERE: Location = (False, None, None)


class PathNames:
    def __init__(self, workspace: str, parent: bool = False):
        self.roots = _workspace_roots(workspace)
        self.parents = tuple(os.path.dirname(root) for root in self.roots) if parent else ()
        self.workspace = self.roots[0]
        self.moved = re.compile("(" + "|".join(map(re.escape, self.roots)) + ")" + re.escape(MOVED) + r"[^/\s:=]*")
        # paths repeat endlessly in a trace (headers, libraries): classify each once
        self.relative = functools.lru_cache(PATH_CACHE_LIMIT)(lambda path: self._classify(os.path.normpath(path)))
        self._resolved_at = functools.lru_cache(AT_CACHE_LIMIT)(self._resolve_at)  # each dirfd's paths, too

    def _classify(self, norm: str) -> str | None:
        """Normalised absolute path → workspace-relative (or absolute outside); None if ignored."""
        if KEPT in norm:
            return None
        for root in self.roots:
            if norm == root:
                return "."
            if norm.startswith(root + "/"):
                return norm[len(root) + 1 :]
            if norm.startswith(root + MOVED):  # the same tree seen at another build path (fuzzer.axes)
                _, _, inside = norm[len(root) + len(MOVED) :].partition("/")
                return inside or "."
        for parent in self.parents:
            if norm.startswith(parent + "/"):
                return "../" + norm[len(parent) + 1 :]
        if any(norm == r or norm.startswith(r + "/") for r in IGNORED_ROOTS):
            return None
        return norm

    def unmoved(self, word: str) -> str:
        """An argv word or environment entry with the tree's other build path (WORKSPACE.at-VALUE)
        read as the workspace: a step is the same step at either path, and a replay runs at the
        workspace's."""
        return self.moved.sub(lambda m: m[1], word) if MOVED in word else word

    def locate(self, cwd: str | None, path_arg: str, dirfd_arg: str | None = None) -> Location | None:
        """Where a call's path argument is, for a process in `cwd` (absolute; None: not known
        to it either); None when it depends on a cwd given as UNKNOWN_CWD."""
        if dirfd_arg is None:
            path = None if is_truncated(path_arg) else decode_string(path_arg)
            if not path:
                return NOWHERE
            if path.startswith("/"):
                return False, None, self.relative(path)
            if cwd == UNKNOWN_CWD:
                return None
            return False, None, self.relative(cwd + "/" + path) if cwd else None
        location = self._resolved_at(dirfd_arg, path_arg)
        if location[0] and location[1] is None:  # AT_FDCWD that strace could not name
            if cwd == UNKNOWN_CWD:
                return None
            return True, None, self.relative(cwd + "/" + decode_string(path_arg)) if cwd else None
        return location

    def _resolve_at(self, dirfd_arg: str, path_arg: str) -> Location:
        path = None if is_truncated(path_arg) else decode_string(path_arg)
        if not path:
            return NOWHERE
        if path.startswith("/"):
            return False, None, self.relative(path)
        base = fd_path(dirfd_arg)
        return dirfd_arg.startswith("AT_FDCWD"), base, self.relative(base + "/" + path) if base else None


def _workspace_roots(workspace: str) -> tuple[str, ...]:
    """The workspace as given and as the kernel reports it (`-y` paths are resolved)."""
    given = os.path.normpath(os.path.abspath(workspace))
    real = os.path.realpath(given)
    return (given,) if real == given else (given, real)
