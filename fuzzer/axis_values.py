"""How an axis's values are drawn, checked and applied to a build's launch: the pieces the
axis table (fuzzer/axes.py) is made of, one function a way of changing a build."""

from __future__ import annotations

import contextlib
import datetime
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

from fuzzer import hold
from fuzzer.tools import disorderfs, faketime, setarch, unshare


@dataclass(frozen=True)
class Launch:
    """How one build is started: what the axes change."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cpus: tuple[int, ...] | None
    tree: Path | None = None  # the campaign's build path (where the build's tree is)


# --- applying values ------------------------------------------------------------------------


def with_env(**values: str) -> Callable[[str, Launch], Launch]:
    """An axis that sets environment variables to its value (`{}` in a template)."""

    def apply(value: str, launch: Launch) -> Launch:
        return replace(launch, env={**launch.env, **{k: v.format(value) for k, v in values.items()}})

    return apply


def wrapped(wrap: Callable[[str, list[str]], list[str]]) -> Callable[[str, Launch], Launch]:
    def apply(value: str, launch: Launch) -> Launch:
        return replace(launch, argv=tuple(wrap(value, list(launch.argv))))

    return apply


def umask(value: str, argv: list[str]) -> list[str]:
    return ["/bin/sh", "-c", f'umask {value} && exec "$@"', "sh", *argv]


def aslr(value: str, argv: list[str]) -> list[str]:
    return setarch.wrap(argv) if value == "off" else argv


def clock(value: str, argv: list[str]) -> list[str]:
    return faketime.wrap_offset(value, argv)


def frozen(value: str, argv: list[str]) -> list[str]:
    return faketime.wrap_frozen(f"{value} 00:00:00", argv)


def on_path(value: str, launch: Launch) -> Launch:
    """`value` appended to PATH, as reprotest's exec_path does: a build that records its
    PATH differs; one that only runs programs from it does not."""
    path = launch.env.get("PATH")
    return replace(launch, env={**launch.env, "PATH": f"{path}:{value}" if path else value})


hold_problem = hold.problem  # the hold library compiles here


def held(value: str, launch: Launch) -> Launch:
    return replace(launch, env=hold.environment(value, launch.env))


def elsewhere(value: str, launch: Launch) -> Launch:
    """The build's tree seen at another path (a bind mount in a mount namespace of its
    own), next to the campaign's: a build that records its path differs."""
    way = unshare.isolation()
    if launch.tree is None or way is None:
        return launch
    path = launch.tree.with_name(f"{launch.tree.name}.at-{value}")
    path.mkdir(exist_ok=True)  # an empty mount point, in the store, reused by every run at this value
    return replace(launch, argv=tuple(way.wrap(list(launch.argv), launch.tree, path, launch.env)))


def make_flag(value: str, launch: Launch) -> Launch:
    """`--shuffle=SEED|reverse` joins MAKEFLAGS, which every make of the build reads."""
    flags = f"{launch.env.get('MAKEFLAGS', '')} --shuffle={value}".strip()
    return replace(launch, env={**launch.env, "MAKEFLAGS": flags})


@contextlib.contextmanager
def disordered(value: str, tree: Path) -> Iterator[None]:
    """The build's tree seen through disorderfs, with its directory entries shuffled or
    reversed, at the same path: the files move to a backing directory for the build."""
    backing = tree.with_name(tree.name + ".disorderfs")
    tree.rename(backing)
    tree.mkdir()
    try:
        with disorderfs.mounted(backing, tree, shuffle=value.startswith("shuffle")):
            yield
    finally:
        tree.rmdir()
        backing.rename(tree)



# --- drawing and checking values -------------------------------------------------------------


def seed(rng: random.Random) -> str:
    return str(rng.getrandbits(31))


def uid(rng: random.Random) -> str:
    return str(rng.randrange(1000, 60000))  # a user's range on Debian, below nobody (65534)


def is_uid(value: str) -> bool:
    return value.isdigit() and 0 < int(value) < 65534 and not value.startswith("0")


def is_day(value: str) -> bool:
    try:
        return len(value) == 10 and datetime.date.fromisoformat(value).year >= 1970
    except ValueError:
        return False


def date(rng: random.Random) -> str:
    """A day from 1990 to 2037 (32-bit time_t's end), as YYYY-MM-DD."""
    day = datetime.date(1990, 1, 1) + datetime.timedelta(days=rng.randrange(17_500))
    return day.isoformat()
