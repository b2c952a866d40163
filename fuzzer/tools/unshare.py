"""unshare: several builds at once at the same path, each in its own mount namespace.

A build of `--parallel N` runs in a private mount namespace where its own tree (a slot's
backing directory) is bind-mounted at the campaign's one path, so every build still sees
that path, and the mount vanishes with the namespace's last process, however the build
ends (nothing to unmount, nothing left if buildfuzz is SIGKILLed). A process made to stay
enters the same way, once: a replay slot's guard, whose builds start in its namespace
with no entry of their own (fuzzer/execute/replay_slots.py).

Two ways in, the first that works here:
- as root, `unshare -m`;
- unprivileged, `unshare -Urm` (root in a new user namespace may mount), then a nested
  `unshare -U` maps the user's own uid and gid back, so the build does not run as root.
  In that mode files of other users (/usr) show as owned by nobody: a build that records
  the owner of files it did not create differs from a build outside any namespace.

The mount and the chdir are done by a few lines of Python, not a shell: dash exports PWD
and OLDPWD on `cd`, bash sets `_`; the build must get its environment exactly as given.
Without either way (no unshare, no permission), `UNSHARE.problem()` says why and builds run
one at a time.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzzer.tools import register

UNSHARE = register("unshare", "util-linux", "several builds at once at the same path (--parallel)",
                   probe=lambda: _probe()[1] or None)
PROBE_TIMEOUT_S = 10
MOUNT_FAILED = 125  # the exit status of a build whose tree could not be mounted (as env(1) uses it)

# argv: LC_CTYPE CWD N (TREE PATH)×N PROGRAM ARGS... — LC_CTYPE is "-" when unset, "=value" when
# set: CPython sets LC_CTYPE when it coerces a C locale (PEP 538), so the build's value is restored.
# A missing mount point is made: inside a slot's namespace the tree's parent is the slot's own.
# Every tree is opened before any mount, and the mounts go shallowest first: a tree bound at a
# directory above another mount's (a patched copy at the user's tree, the campaign's path in it)
# neither hides that one's tree nor covers its mount.
ENTER = f"""\
import ctypes, os, sys
lc_ctype, cwd, count, *rest = sys.argv[1:]
mounts, argv = rest[:2 * int(count)], rest[2 * int(count):]
if lc_ctype == "-":
    os.environ.pop("LC_CTYPE", None)
else:
    os.environ["LC_CTYPE"] = lc_ctype[1:]
MS_BIND, MS_REC = 4096, 16384
def failed(tree, path, errno):
    sys.stderr.write(f"buildfuzz: cannot bind-mount {{tree}} at {{path}}: {{os.strerror(errno)}}\\n")
    sys.exit({MOUNT_FAILED})
opened = []
for tree, path in zip(mounts[::2], mounts[1::2]):
    try:
        opened.append((tree, os.open(tree, os.O_PATH), path))
    except OSError as e:
        failed(tree, path, e.errno)
for tree, fd, path in sorted(opened, key=lambda m: os.path.normpath(m[2]).count("/")):
    os.makedirs(path, exist_ok=True)
    if ctypes.CDLL(None, use_errno=True).mount(f"/proc/self/fd/{{fd}}".encode(), os.fsencode(path), None,
                                               MS_BIND | MS_REC, None):
        failed(tree, path, ctypes.get_errno())
    os.close(fd)
os.chdir(cwd)
try:
    os.execvp(argv[0], argv)
except OSError as e:
    sys.stderr.write(f"buildfuzz: cannot run {{argv[0]}}: {{e.strerror}}\\n")
    sys.exit(127)
"""


@dataclass(frozen=True)
class Isolation:
    """How a build enters its own mount namespace here."""

    user_namespace: bool  # unprivileged: through a user namespace, ids mapped back for the build

    @property
    def mode(self) -> str:
        return "unshare -Urm (user namespace)" if self.user_namespace else "unshare -m (root)"

    def wrap(self, argv: list[str], tree: Path, path: Path, env: dict[str, str],
             also: tuple[tuple[Path, Path], ...] = (), cwd: Path | None = None) -> list[str]:
        """The argv that runs `argv` (with environment `env`) in a new mount namespace, in
        `tree` bind-mounted at `path` (and each directory of `also` at its mount point), in
        `cwd` (default: `path`). The process keeps its pid through every step (each one
        execs the next), so the guard, the jitter engine and strace see the build as usual."""
        unshare = UNSHARE.require()
        enter = ["-Urm"] if self.user_namespace else ["-m"]
        inner = [unshare, "-U", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}", "--"] \
            if self.user_namespace else []
        lc_ctype = "-" if "LC_CTYPE" not in env else "=" + env["LC_CTYPE"]
        mounts = [str(p) for pair in ((tree, path), *also) for p in pair]
        return [unshare, *enter, "--", sys.executable, "-I", "-S", "-c", ENTER, lc_ctype, str(cwd or path),
                str(len(mounts) // 2), *mounts, *inner, *argv]


@functools.cache
def _probe() -> tuple[Isolation | None, str]:
    """The first way in that works here, else None and why (cached: it runs a few processes)."""
    if UNSHARE.path() is None:
        return None, UNSHARE.not_found()
    ways = [Isolation(user_namespace=False)] if os.geteuid() == 0 else []
    reasons = []
    for way in ways + [Isolation(user_namespace=True)]:
        reason = _try(way)
        if not reason:
            return way, ""
        reasons.append(f"{way.mode}: {reason}")
    return None, "; ".join(reasons)


def _try(way: Isolation) -> str:
    """'' when a bind mount through `way` is seen inside and not outside, else what went wrong."""
    with tempfile.TemporaryDirectory(prefix="buildfuzz-unshare-probe-") as scratch:
        tree, path = Path(scratch, "tree"), Path(scratch, "path")
        tree.mkdir()
        path.mkdir()
        (tree / "marker").write_text("inside\n")
        argv = way.wrap(["/bin/sh", "-c", "pwd -P; cat marker"], tree, path, dict(os.environ))
        try:
            proc = subprocess.run(argv, cwd=tree, capture_output=True, timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
        if proc.returncode != 0:
            lines = proc.stderr.decode(errors="replace").strip().splitlines()
            return lines[-1] if lines else f"exit status {proc.returncode}"
        if proc.stdout.decode(errors="replace") != f"{path}\ninside\n":
            return "the tree was not seen at its path inside the namespace"
        if any(path.iterdir()):
            return "the mount leaked out of the namespace"
    return ""


def isolation() -> Isolation | None:
    """How builds get their own mount namespace here; None when they cannot."""
    return _probe()[0]


def forget() -> None:
    """Probe again next time (tests change PATH)."""
    _probe.cache_clear()


# --- the hostname axis: a UTS namespace of the build's own -------------------------------

HOSTNAME_SCRIPT = 'hostname "$0" && exec "$@"'


@functools.cache
def hostname_problem() -> str | None:
    """None when this process may give a build its own hostname (root: `unshare -u`)."""
    unshare = UNSHARE.path()
    if unshare is None:
        return UNSHARE.not_found()
    try:
        probe = subprocess.run([unshare, "-u", "/bin/sh", "-c", HOSTNAME_SCRIPT, "buildfuzz-probe", "true"],
                               capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare -u could not run: {e}"
    return None if probe.returncode == 0 else "a UTS namespace needs root here (unshare -u failed)"


def with_hostname(name: str, argv: list[str]) -> list[str]:
    """`argv` run with `name` as its hostname, in a UTS namespace of its own (same pid: exec)."""
    return [UNSHARE.require(), "-u", "/bin/sh", "-c", HOSTNAME_SCRIPT, name, *argv]


# --- the user axis: the build's uid and gid seen as others, in a user namespace -------------


@functools.cache
def user_problem() -> str | None:
    """None when a build may run as another uid and gid here (`unshare --map-user`, which needs
    no privilege where user namespaces are allowed)."""
    unshare = UNSHARE.path()
    if unshare is None:
        return UNSHARE.not_found()
    try:
        probe = subprocess.run(as_user("4242", ["id", "-u"]), capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare --map-user could not run: {e}"
    if probe.returncode != 0 or probe.stdout.strip() != b"4242":
        lines = probe.stderr.decode(errors="replace").strip().splitlines()
        return f"no user namespace here ({lines[-1] if lines else 'unshare --map-user failed'})"
    return None


def as_user(uid: str, argv: list[str]) -> list[str]:
    """`argv` run as uid and gid `uid` in a user namespace of its own (same pid: exec). What it
    writes is the campaign's user's on disk; inside, its files, and the files the campaign's
    user owns, show as `uid`'s, and its supplementary groups are gone."""
    return [UNSHARE.require(), f"--map-user={uid}", f"--map-group={uid}", "--", *argv]
