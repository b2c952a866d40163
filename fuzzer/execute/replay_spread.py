"""One step's replays spread over the replay slots nobody is using.

The audit and localization give each step one slot (`replay_slots.in_slots`); a step
whose screen or stabiliser search runs while no other step waits for a slot (the last
varying kernel of a build, its 57 s replays one after another) would leave the other
slots and their CPUs idle. A `SpreadReplayer` borrows the slots free at the moment it
replays (never one a waiting step could take), runs its share of the replays in each, and
gives them back when that call ends: same call, same conditions, one outcome
(`step_replay.joined`). A screen stops in every slot once that slot's replays and what was
seen before decide it, so spreading costs at most one replay per borrowed slot more than
replaying in turns would.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator

from fuzzer.execute.step_replay import REPLAYS, ReplayOutcome, StepReplayer, Variation, joined


def shares(times: int, slots: int) -> list[int]:
    """`times` replays over at most `slots` slots, as evenly as they go, none empty."""
    used = max(min(times, slots), 1)
    size, extra = divmod(times, used)
    return [size + (1 if i < extra else 0) for i in range(used)]


class FreeSlots:
    """The slots (by index) not in use; `take` waits for one, `spare` takes only those free
    when nobody waits."""

    def __init__(self, slots: Iterable[int]):
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        self._lock, self._waiting = threading.Lock(), 0
        for slot in slots:
            self._free.put(slot)

    def take(self) -> int:
        with self._lock:
            self._waiting += 1
        try:
            return self._free.get()
        finally:
            with self._lock:
                self._waiting -= 1

    def give(self, slot: int) -> None:
        self._free.put(slot)

    def spare(self, most: int) -> list[int]:
        """Up to `most` slots, none while a step waits for one: its first replays come first."""
        taken: list[int] = []
        with self._lock:
            while len(taken) < most and not self._waiting:
                try:
                    taken.append(self._free.get_nowait())
                except queue.Empty:
                    break
        return taken


class Lender:
    """Replay slots whose free ones a step's replays borrow, only while `in_slots` hands them
    out (`lending`): a caller that gives slots out another way gets no borrowing, so no two
    replays ever share a slot."""

    free: FreeSlots | None = None
    at_once = 1

    @contextlib.contextmanager
    def lending(self, free: FreeSlots) -> Iterator[None]:
        self.free = free
        try:
            yield
        finally:
            self.free = None

    def spread(self, own: StepReplayer, other: Callable[[int], StepReplayer]) -> "StepReplayer | SpreadReplayer":
        return SpreadReplayer(own, other, self.free, self.at_once) if self.free else own


class SpreadReplayer:
    """A step's replayer in its own slot that runs each call's replays in the free slots too.
    `other(slot)`: a replayer of the same call in another slot; `at_once`: how many replays
    run at once (the CPU turns), the most slots one call uses."""

    def __init__(self, own: StepReplayer, other: Callable[[int], StepReplayer], free: FreeSlots, at_once: int):
        self.own, self.other, self.free, self.at_once = own, other, free, at_once

    def __enter__(self) -> "SpreadReplayer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.own.close()

    def replay(self, variation: Variation = Variation("plain"), times: int = REPLAYS,
               seen: tuple[str, ...] | None = None) -> ReplayOutcome:
        return self.replay_each([variation], times, seen)[variation.name]

    def replay_each(self, variations: list[Variation], times: int,
                    seen: tuple[str, ...] | None = None) -> dict[str, ReplayOutcome]:
        borrowed = self.free.spare(min(times, self.at_once) - 1)
        if not borrowed:
            return self.own.replay_each(variations, times, seen)
        try:
            return self._spread(borrowed, variations, times, seen)
        finally:
            for slot in borrowed:
                self.free.give(slot)

    def _spread(self, borrowed: list[int], variations: list[Variation], times: int,
                seen: tuple[str, ...] | None) -> dict[str, ReplayOutcome]:
        counts = shares(times, 1 + len(borrowed))

        def in_borrowed(slot: int, count: int) -> dict[str, ReplayOutcome]:
            with self.other(slot) as replayer:  # its slot's files put back when the call ends
                return replayer.replay_each(variations, count, seen)

        with ThreadPoolExecutor(len(counts), thread_name_prefix="buildfuzz-spread") as pool:
            futures = [pool.submit(in_borrowed, slot, count) for slot, count in zip(borrowed, counts[1:])]
            outcomes = [self.own.replay_each(variations, counts[0], seen)] + [f.result() for f in futures]
        return {v.name: joined([o[v.name] for o in outcomes]) for v in variations}


# what replays one step: in its own slot, or spread over the free ones too (Lender.spread)
Replayer = StepReplayer | SpreadReplayer
