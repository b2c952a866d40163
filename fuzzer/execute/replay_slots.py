"""Places where step replays run at once: each its own copy of the traced tree, mounted at
the campaign's path in the slot's own mount namespace (fuzzer/tools/unshare.py, as
`--parallel` builds are), with a guard of its own.

A step replayed in slot k sees the campaign's path, as it did in the traced build, while
its files live in `<path>.replays/<k>`; a replay restores and compares files in its own
copy, so two steps replayed at once never see each other's outputs. When the tree's
parent is buildfuzz's (`Workspace.parent_outputs`: dpkg-buildpackage leaves its `.deb`s
there), the slot is the parent: `<k>` holds the tree's copy under the tree's name and a
copy of what the build left beside it, and is mounted at the tree's parent, so a step
writing `../pkg.deb` writes the slot's, the one its check reads, never the workspace's.
The copy is the whole tree, made the first time the slot is used, in the thread that uses
it (the first replays start after one copy, not N in a row, and an audit of two steps
copies two trees).

The slot's guard process is started inside the slot's namespace, once: every replay it
starts is there already, at no cost (a namespace entered per replay cost an unshare and
a Python start, 14-24 ms of CPU; bench/bench_replay_entry.py compares them). The namespace and its
mount end with the guard and the replays it reaps: closing the slot ends them all,
however the slots' work ended.

There are SLOTS_PER_REPLAY slots per replay wanted at once, and as many CPU turns as
replays wanted: a replay holds a turn only while its process runs. A step's replays are
spread over at least SPREAD_S (second-resolution clocks must tick), so a short step's
slot mostly waits; that wait is another slot's turn, not an idle CPU. A step's replays also
run in the slots free at the time, none a waiting step needs (`replay_spread`), so one
step left replaying does not leave the other CPUs idle. Without mount
namespaces there is one slot, the tree itself, at the campaign's path, and
`serial_reason` says why.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from fuzzer.execute.executor import Executor
from fuzzer.execute.guard import Guard, GuardError
from fuzzer.execute.local import LocalExecutor
from fuzzer.execute.replay_spread import FreeSlots, Lender, SpreadReplayer
from fuzzer.execute.run import RunRecord
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.execute.workspace import Workspace, parent_output_names
from fuzzer.tools import unshare

Item = TypeVar("Item")
Slot = TypeVar("Slot")
Result = TypeVar("Result")

# a step shorter than SPREAD_S / REPLAYS waits between its replays: twice the slots keep the
# CPUs busy down to steps of half that (bench/bench_audit.py measures it), at a tree copy each
SLOTS_PER_REPLAY = 2


def replays_at_once(config) -> int:
    """`--parallel` when given, else one replay per CPU."""
    from fuzzer.model import available_cpus

    return config.parallel if config.parallel > 1 else len(available_cpus())


def in_slots(items: Sequence[Item], slots: Sequence[Slot], work: Callable[[Item, Slot], Result],
             replaying: "Slots | None" = None) -> list[Result]:
    """`work(item, slot)` for every item in order, each in the first free slot, as many at
    once as there are slots; the results in the items' order. `replaying`: the replay slots
    `slots[k]` replays in (slot k), lent for the call: a step's replays also borrow the
    slots no item holds or waits for (`replay_spread`). One slot: in this
    thread, so Ctrl-C reaches the replay's wait. Several: on the first error (or Ctrl-C), no
    item starts any more, `replaying.interrupt()` ends those running, and the error is
    raised once they have."""
    free = FreeSlots(range(len(slots)))
    with replaying.lending(free) if replaying else contextlib.nullcontext():
        return _in_free_slots(items, slots, work, free, replaying.interrupt if replaying else lambda: None)


def _in_free_slots(items: Sequence[Item], slots: Sequence[Slot], work: Callable[[Item, Slot], Result],
                   free: FreeSlots, interrupt: Callable[[], None]) -> list[Result]:
    def in_a_free_slot(item: Item) -> Result:
        k = free.take()
        try:
            return work(item, slots[k])
        finally:
            free.give(k)

    if len(slots) <= 1:
        return [in_a_free_slot(item) for item in items]

    with ThreadPoolExecutor(len(slots), thread_name_prefix="buildfuzz-replay") as pool:
        futures = [pool.submit(in_a_free_slot, item) for item in items]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:  # the first error, not the first item's result
                if future in done and future.exception() is not None:
                    future.result()
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            interrupt()
            raise


def holding(isolation: unshare.Isolation, tree: Path, path: Path) -> Callable[[list[str], dict[str, str]], list[str]]:
    """How a guard process starts in a mount namespace of its own with `tree` at `path`, for
    its builds to start in; in "/", so that `python -m` finds nothing of the tree's."""
    return lambda argv, env: isolation.wrap(argv, tree, path, env, cwd=Path("/"))


def replay_slots(executor: Executor, record: RunRecord, wanted: int, logs: Path) -> "Slots":
    """Slots on this machine for a local executor's tree; else its step session's."""
    if isinstance(executor, LocalExecutor):
        workspace = executor.spec.workspace
        return ReplaySlots(workspace.path, wanted, logs, workspace.parent_outputs)
    return SessionSlots(executor.step_session(record))


class SessionSlots(Lender):
    """The executor's own step session's slots (a Dask cluster's: each replay on a worker,
    sent the files its step looked at)."""

    def __init__(self, session):
        self.session = session
        self.count, self.serial_reason = session.count, session.serial_reason
        self.at_once = self.count

    def replayer(self, slot: int, call: StepCall, cpus: tuple[int, ...]):
        return self.spread(self.session.replayer(call, cpus, slot), lambda k: self.session.replayer(call, cpus, k))

    def interrupt(self) -> None:
        """Nothing to do here: a replay on a worker ends when its actor is let go."""

    def __enter__(self) -> "SessionSlots":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class ReplaySlots(Lender):
    def __init__(self, tree: Path, wanted: int, logs: Path, parent_outputs: bool = False):
        """`parent_outputs`: the tree's parent is buildfuzz's, and each slot has its own (above)."""
        self.tree, self.logs, self.parent_outputs = tree, logs, parent_outputs
        self.isolation = unshare.isolation() if wanted > 1 else None
        self.serial_reason = "" if wanted <= 1 or self.isolation else unshare.UNSHARE.problem() or ""
        self.at_once = wanted if self.isolation else 1  # replays whose processes run at once
        self.count = self.at_once * SLOTS_PER_REPLAY if self.isolation else 1
        self._turns = threading.BoundedSemaphore(wanted) if self.isolation else None
        self._root = tree.with_name(tree.name + ".replays")
        self._trees: list[Path] = [tree] * self.count  # a slot's own copy once its guard starts
        self._guards: list[Guard | None] = [None] * self.count
        self._lock, self._interrupted = threading.Lock(), False

    def replayer(self, slot: int, call: StepCall, cpus: tuple[int, ...]) -> StepReplayer | SpreadReplayer:
        """A replayer in `slot`; while `in_slots` lends the slots, its replays also run in
        those free when it replays, unless it writes outside its tree (every slot's replays
        would write the one path)."""
        if call.writes_outside:
            return self._replayer(slot, call, cpus)
        return self.spread(self._replayer(slot, call, cpus), lambda k: self._replayer(k, call, cpus))

    def _replayer(self, slot: int, call: StepCall, cpus: tuple[int, ...]) -> StepReplayer:
        """A replayer in `slot`, which one thread at a time uses (`in_slots` and `FreeSlots` see to it)."""
        logs = self.logs / f"slot-{slot}"
        guard = self._guards[slot]
        if guard is None:
            self._trees[slot] = self._copy(slot) if self.isolation else self.tree
            with self._lock:  # against interrupt(): no guard starts after it
                if self._interrupted:
                    raise GuardError("the replay slots were interrupted")
                guard = self._guards[slot] = Guard(inside=holding(self.isolation, *self._mount(slot))) \
                    if self.isolation else Guard()
        return StepReplayer(guard, self._trees[slot], call, cpus, logs, turns=self._turns,
                            seen_at=self.tree)

    def _copy(self, k: int) -> Path:
        """Slot k's copy of the tree (in the slot's parent, beside copies of the parent's outputs)."""
        dest = self._root / str(k)
        shutil.rmtree(dest, ignore_errors=True)
        if not self.parent_outputs:
            shutil.copytree(self.tree, dest, symlinks=True)
            return dest
        shutil.copytree(self.tree, dest / self.tree.name, symlinks=True)
        for name in parent_output_names(self.tree):
            entry = self.tree.parent / name
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, dest / name, symlinks=True)
            else:
                shutil.copy2(entry, dest / name, follow_symlinks=False)
        return dest / self.tree.name

    def interrupt(self) -> None:
        """From any thread: end the replays running now; the slots can run none after."""
        with self._lock:
            self._interrupted = True
            for guard in self._guards:
                if guard is not None:
                    guard.interrupt()

    def _mount(self, slot: int) -> tuple[Path, Path]:
        """What slot's namespace mounts, and where: its tree at the tree's path, or, when the
        parent is buildfuzz's, the slot's parent (its tree and outputs) at the tree's parent."""
        tree = self._trees[slot]
        return (tree.parent, self.tree.parent) if self.parent_outputs else (tree, self.tree)

    def close(self) -> None:
        """End every replay and every slot's guard (with them its namespace and mount),
        remove the copies."""
        for guard in self._guards:
            if guard is not None:
                guard.close()
        if self.isolation is not None:
            Workspace(source=self.tree, path=self._root).remove()

    def __enter__(self) -> "ReplaySlots":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


Slots = ReplaySlots | SessionSlots
