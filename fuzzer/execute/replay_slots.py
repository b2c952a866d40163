"""Places where step replays run at once: each its own copy of the traced tree, mounted at
the campaign's path in the replay's own mount namespace (fuzzer/tools/unshare.py, as
`--parallel` builds are), with a guard of its own.

A step replayed in slot k sees the campaign's path, as it did in the traced build, while
its files live in `<path>.replays/<k>`; a replay restores and compares files in its own
copy, so two steps replayed at once never see each other's outputs. The copy is the whole
tree, made once per slot (sending only the files a step read, content-addressed, to a Dask
worker is not built). Without mount namespaces there is one slot, the tree itself, at the
campaign's path, and `serial_reason` says why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from fuzzer.execute.guard import Guard
from fuzzer.execute.step_replay import StepCall, StepReplayer, Wrapper
from fuzzer.execute.workspace import Workspace
from fuzzer.tools import unshare


class ReplaySlots:
    def __init__(self, tree: Path, wanted: int, logs: Path):
        self.tree, self.logs = tree, logs
        self.isolation = unshare.isolation() if wanted > 1 else None
        self.serial_reason = "" if wanted <= 1 or self.isolation else unshare.unavailable()
        self.count = wanted if self.isolation else 1
        self._root = tree.with_name(tree.name + ".replays")
        self._trees = [self._copy(k) for k in range(self.count)] if self.isolation else [tree]
        self._guards = [Guard() for _ in range(self.count)]

    def _copy(self, k: int) -> Path:
        dest = self._root / str(k)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.tree, dest, symlinks=True)
        return dest

    def replayer(self, slot: int, call: StepCall, cpus: tuple[int, ...]) -> StepReplayer:
        logs = self.logs / f"slot-{slot}"
        return StepReplayer(self._guards[slot], self._trees[slot], call, cpus, logs, self._enter(slot, call))

    def _enter(self, slot: int, call: StepCall) -> Wrapper | None:
        if self.isolation is None:
            return None
        isolation, tree, path = self.isolation, self._trees[slot], self.tree
        cwd = str(path / call.cwd)
        env_program = shutil.which("env") or "/usr/bin/env"
        # the namespace's entry starts at the path's root; env -C moves to the step's directory
        # without touching the environment (a shell's cd would export PWD and OLDPWD)
        return lambda argv: isolation.wrap([env_program, "-C", cwd, "--", *argv], tree, path, call.env)

    def close(self) -> None:
        """End every replay, remove the copies."""
        for guard in self._guards:
            guard.close()
        if self.isolation is not None:
            Workspace(source=self.tree, path=self._root).remove()

    def __enter__(self) -> "ReplaySlots":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
