"""A small git history for `buildfuzz bisect`, made in a temporary directory (no network).

Twelve commits; commit 7 drops `gen.txt` from `out.txt`'s prerequisites. From then on,
under -j, `out.txt`'s recipe races `gen.txt`'s: it waits until `gen.txt` has been written
(polling), except with chance 1/4 (a byte of /dev/urandom) when it reads at once, before
`gen.txt` (written after 0.2 s) exists, and the build fails. Waiting for the file rather
than for a fixed time keeps the rate on a loaded machine and costs no more than the
generator does. The reference (-j1) builds `gen.txt` first and never fails.
The other commits change only `notes.txt`. Measured by hand at commit 12, on a shared
machine (load 13-16 on 2 CPUs): `make -j8` builds failed 34 of 120 (28%; exact 95% interval
20%–37%); 0 of 40 at commit 6, 0 of 20 `make -j1` builds at commit 12.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

BAD_COMMIT = 7
COMMITS = 12
RATE = 0.25  # by design: one byte in four is a multiple of 4

_HEAD = "all: gen.txt out.txt\n\ngen.txt:\n\tsleep 0.2; echo generated > gen.txt\n\n"
_RECIPE = ("\tr=$$(od -An -N1 -tu1 /dev/urandom); if [ $$((r % 4)) -ne 0 ]; then "
           "while [ ! -s gen.txt ]; do sleep 0.02; done; fi; cat gen.txt > out.txt\n")


def makefile(commit: int, broken: bool = False) -> str:
    """`broken`: a commit whose build fails whatever the schedule (bisect skips it)."""
    prerequisite = "" if commit >= BAD_COMMIT else " gen.txt"
    fails = "\tfalse\n" if broken else ""
    return _HEAD + f"out.txt:{prerequisite}\n" + fails + _RECIPE + "\nclean:\n\trm -f gen.txt out.txt\n"


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(repo), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make_history(repo: Path, broken: frozenset[int] = frozenset()) -> list[str]:
    """The repository at `repo`, and its commits' hashes, first to last; the `broken`
    commits fail to build."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    hashes = []
    for commit in range(1, COMMITS + 1):
        (repo / "Makefile").write_text(makefile(commit, commit in broken))
        (repo / "notes.txt").write_text(f"commit {commit}\n")
        _git(repo, "add", "Makefile", "notes.txt")
        subject = "drop gen.txt from out.txt's prerequisites" if commit == BAD_COMMIT else f"notes {commit}"
        _git(repo, "commit", "-q", "-m", f"commit {commit}: {subject}")
        hashes.append(_git(repo, "rev-parse", "HEAD"))
    return hashes
