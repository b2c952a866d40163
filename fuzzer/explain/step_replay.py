"""Replay one step alone, on the reference build's final tree, and hash its outputs.

Before every replay the step's outputs are restored to their reference state, so a
step that appends (`>> list`) is not mistaken for one that varies. Replays are spread
over more than a second, so a step that embeds the time in seconds does vary.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fuzzer.execute.guard import Guard
from fuzzer.observe import hash_file

REPLAYS = 5
SPREAD_S = 1.2  # replays span at least this long: second-resolution clocks must tick
STEP_TIMEOUT_S = 120.0

Wrapper = Callable[[list[str]], list[str]]


@dataclass(frozen=True)
class Variation:
    """One way to run the step: extra environment and argv wrappers (setarch, faketime)."""

    name: str
    env: tuple[tuple[str, str], ...] = ()
    wrappers: tuple[Wrapper, ...] = ()
    cpus: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ReplayOutcome:
    digests: tuple[str, ...]  # digest of all outputs, one per replay
    exit_codes: tuple[int | None, ...]

    @property
    def distinct(self) -> int:
        return len(set(self.digests))

    @property
    def varies(self) -> bool:
        return self.distinct > 1


@dataclass
class StepReplayer:
    guard: Guard
    tree: Path
    argv: list[str]
    cwd: str  # relative to the tree
    outputs: list[str]  # relative to the tree
    env: dict[str, str]
    cpus: tuple[int, ...]
    logs: Path

    def __post_init__(self) -> None:
        self._backup = self.logs / "step-outputs"
        shutil.rmtree(self._backup, ignore_errors=True)
        for rel in self.outputs:
            src = self.tree / rel
            if src.is_file():
                dst = self._backup / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)

    def replay(self, variation: Variation = Variation("plain"), times: int = REPLAYS) -> ReplayOutcome:
        return self.replay_each([variation], times)[variation.name]

    def replay_each(self, variations: list[Variation], times: int) -> dict[str, ReplayOutcome]:
        """Replay every variation `times` times, round-robin, the rounds spread over
        SPREAD_S: one pass over the clock serves every variation."""
        digests: dict[str, list[str]] = {v.name: [] for v in variations}
        codes: dict[str, list[int | None]] = {v.name: [] for v in variations}
        started = time.monotonic()
        for i in range(times):
            wait = started + SPREAD_S * i / max(times - 1, 1) - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            for variation in variations:
                codes[variation.name].append(self._run_once(variation, i))
                digests[variation.name].append(self._digest())
        return {name: ReplayOutcome(tuple(digests[name]), tuple(codes[name])) for name in digests}

    def _run_once(self, variation: Variation, i: int) -> int | None:
        self._restore()
        argv = list(self.argv)
        for wrap in variation.wrappers:
            argv = wrap(argv)
        env = {**self.env, **dict(variation.env)}
        log = self.logs / f"step-{variation.name.replace(' ', '_').replace('+', '_')}-{i}.log"
        self.guard.start(argv, cwd=str(self.tree / self.cwd), env=env, cpus=variation.cpus or self.cpus, log_path=str(log))
        return self.guard.wait(STEP_TIMEOUT_S).exit_code

    def _restore(self) -> None:
        for rel in self.outputs:
            saved, live = self._backup / rel, self.tree / rel
            if saved.is_file():
                live.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(saved, live)
            elif live.is_file():
                live.unlink()

    def _digest(self) -> str:
        h = hashlib.sha256()
        for rel in sorted(self.outputs):
            path = self.tree / rel
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            h.update((hash_file(str(path)) if path.is_file() else "absent").encode() + b"\n")
        return h.hexdigest()


def umask_wrapper(mask: int) -> Wrapper:
    def wrap(argv: list[str]) -> list[str]:
        return ["/bin/sh", "-c", f'umask {mask:03o} && exec "$@"', "sh", *argv]

    return wrap

