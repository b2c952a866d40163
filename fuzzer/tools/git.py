"""git: the history `buildfuzz bisect` walks. Each tested commit gets its own detached
worktree outside the user's checkout, removed (and pruned) when its builds are done."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fuzzer.errors import UsageError
from fuzzer.escaping import shown
from fuzzer.tools import register

GIT = register("git", "git", "buildfuzz bisect (a git checkout's history)")
TIMEOUT_S = 120


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([GIT.require(), "-C", str(repo), *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


def toplevel(path: Path) -> Path:
    """The checkout `path` is in; not a git checkout is the user's error."""
    found = _git(path, "rev-parse", "--show-toplevel")
    if found.returncode != 0:
        raise UsageError(f"{shown(str(path))} is not in a git repository (buildfuzz bisect walks a git history)")
    return Path(found.stdout.strip())


def commit(repo: Path, rev: str, option: str) -> str:
    """The full hash of `rev`; an unknown one is the user's error."""
    found = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if found.returncode != 0:
        raise UsageError(f"{option} {shown(rev)} is not a commit of {shown(str(repo))}")
    return found.stdout.strip()


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return _git(repo, "merge-base", "--is-ancestor", older, newer).returncode == 0


def dirty(repo: Path) -> list[str]:
    """Tracked files changed in the checkout (untracked ones are not built by a commit)."""
    found = _git(repo, "status", "--porcelain", "--untracked-files=no")
    return [line[3:] for line in found.stdout.splitlines()]


def between(repo: Path, good: str, bad: str) -> list[str]:
    """The commits after `good` up to `bad`, oldest first, along the first-parent line
    (a merge is tested as one step, as `git bisect --first-parent` does)."""
    found = _git(repo, "rev-list", "--reverse", "--first-parent", "--ancestry-path", f"{good}..{bad}")
    return found.stdout.split()


def subject(repo: Path, rev: str) -> str:
    return _git(repo, "log", "-1", "--format=%h %s", rev).stdout.strip()


def add_worktree(repo: Path, rev: str, path: Path) -> None:
    found = _git(repo, "worktree", "add", "--detach", "--quiet", str(path), rev)
    if found.returncode != 0:
        raise UsageError(f"git worktree add for {rev[:12]} failed: {found.stderr.strip()}")


def remove_worktree(repo: Path, path: Path) -> None:
    _git(repo, "worktree", "remove", "--force", str(path))
    _git(repo, "worktree", "prune")
