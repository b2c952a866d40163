"""Replays spent where they decide something (issue 30, item 8): a screen stops at the first
two outputs that differ (fuzzer/execute/step_replay.py), a step's replays run in the slots
nobody is using (fuzzer/execute/replay_spread.py)."""

from __future__ import annotations

import threading
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.execute.guard import Guard
from fuzzer.execute.replay_spread import FreeSlots, Lender, SpreadReplayer, shares
from fuzzer.execute.step_replay import ReplayOutcome, StepCall, StepReplayer, Variation, decided, joined


@given(st.integers(0, 60), st.integers(1, 8))
def test_shares_split_every_replay_evenly_over_at_most_the_slots(times, slots):
    split = shares(times, slots)
    assert sum(split) == times and 1 <= len(split) <= slots
    assert max(split) - min(split) <= 1
    assert times == 0 or min(split) >= 1  # no slot is borrowed for nothing


@given(st.lists(st.sampled_from("abc"), max_size=8), st.booleans())
def test_a_screen_is_decided_by_two_different_outputs_or_a_failure(digests, failed):
    assert decided(tuple(digests), failed) == (failed or len(set(digests)) > 1)


@given(st.lists(st.lists(st.sampled_from("ab"), max_size=4), min_size=1, max_size=4))
def test_joined_outcomes_keep_every_replay_in_order(parts):
    outcomes = [ReplayOutcome(tuple(p), (0,) * len(p), 0, idle=(False,) * len(p)) for p in parts]
    both = joined(outcomes)
    assert both.digests == tuple(d for p in parts for d in p) and len(both.exit_codes) == len(both.digests)
    assert both.varies == (len({d for p in parts for d in p}) > 1)


def test_free_slots_are_spared_only_while_no_step_waits_for_one():
    free = FreeSlots(range(3))
    assert free.take() == 0
    assert free.spare(5) == [1, 2]  # nobody waits: a step's replays may use them
    got: list[int] = []
    waiter = threading.Thread(target=lambda: got.append(free.take()))
    waiter.start()
    while not free._waiting:  # the next step waits for a slot
        pass
    free.give(1)
    waiter.join(10)
    assert got == [1]
    free.give(2)
    assert free.spare(1) == [2]


def tree_with(tmp_path: Path, script: str) -> tuple[Path, StepCall]:
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "out").write_text("traced\n")
    return tree, StepCall(argv=("/bin/sh", "-c", script), cwd=".", env={"PATH": "/usr/bin:/bin"}, exit_code=0,
                          restored=("out",), compared=("out",))


def test_a_screen_stops_at_the_first_two_different_outputs_and_a_stable_step_gets_every_replay(tmp_path):
    varying, call = tree_with(tmp_path, "head -c 16 /dev/urandom > out")
    with Guard() as guard, StepReplayer(guard, varying, call, (0,), tmp_path / "logs") as replayer:
        assert len(replayer.replay(times=5, seen=()).digests) == 2
        assert len(replayer.replay(times=5).digests) == 5  # no screen: every replay asked for
    stable, call = tree_with(tmp_path, "echo same > out")
    with Guard() as guard, StepReplayer(guard, stable, call, (0,), tmp_path / "logs") as replayer:
        assert replayer.replay(times=5, seen=()).digests == (replayer.replay(times=1).digests[0],) * 5
        # what was seen before counts: one replay that differs from it decides
        assert len(replayer.replay(times=5, seen=("the traced build's",)).digests) == 1


class Counting:
    """A fake replayer in one slot: the same bytes every time, each replay logged by slot."""

    def __init__(self, slot: int, log: list[int]):
        self.slot, self.log = slot, log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.log.append(-1 - self.slot)  # closed: its slot's files put back

    def replay_each(self, variations, times, seen=None):
        self.log.extend([self.slot] * times)
        return {v.name: ReplayOutcome(("same",) * times, (0,) * times, 0) for v in variations}


def test_a_steps_replays_run_in_the_free_slots_too_and_give_them_back():
    free, log = FreeSlots(range(4)), []
    own = free.take()
    spread = SpreadReplayer(Counting(own, log), lambda k: Counting(k, log), free, at_once=2)
    outcome = spread.replay(Variation("plain"), 5, seen=())
    assert len(outcome.digests) == 5 and outcome.stable
    assert sorted(k for k in log if k >= 0) == [0, 0, 0, 1, 1]  # two at once: its own slot and one free one
    assert -2 in log and -1 not in log  # the borrowed replayer closed, its own still open
    assert sorted(free.spare(4)) == [1, 2, 3]  # given back


def test_a_step_borrows_no_slot_a_waiting_step_needs():
    free, log = FreeSlots(range(2)), []
    own = free.take()
    spread = SpreadReplayer(Counting(own, log), lambda k: Counting(k, log), free, at_once=2)
    other = free.take()  # the other slot is busy with another step
    spread.replay(Variation("plain"), 4)
    free.give(other)
    assert log == [own] * 4


def test_slots_lend_their_free_ones_only_while_in_slots_hands_them_out():
    """A caller that gives slots out itself (a bench's own loop) gets plain replayers: no
    borrowed slot can be one it is using."""
    lender, own = Lender(), Counting(0, [])
    assert lender.spread(own, lambda k: Counting(k, [])) is own
    with lender.lending(FreeSlots(range(2))):
        assert isinstance(lender.spread(own, lambda k: Counting(k, [])), SpreadReplayer)
    assert lender.spread(own, lambda k: Counting(k, [])) is own


def test_a_step_writing_outside_its_tree_is_never_spread_over_slots(tmp_path):
    """Its files under /tmp are one path for every slot: two replays at once would clobber them."""
    from fuzzer.execute.replay_slots import ReplaySlots

    inside = StepCall(("python3", "gen.py"), ".", {}, 0, ("out.txt",), ("out.txt",))
    outside = StepCall(("python3", "mkwheel.py"), ".", {}, 0, ("/tmp/tmp.x/pkg.whl",), ("/tmp/tmp.x/pkg.whl",))
    assert not inside.writes_outside and outside.writes_outside
    assert StepCall(("sh",), ".", {}, 0, (), (), made_dirs=("/tmp/ar123",)).writes_outside
    slots = ReplaySlots(tmp_path / "tree", 1, tmp_path / "logs")
    slots._replayer = lambda slot, call, cpus: Counting(slot, [])  # no guard: which replayer is all that counts
    with slots.lending(FreeSlots(range(1))):
        assert isinstance(slots.replayer(0, inside, (0,)), SpreadReplayer)
        assert isinstance(slots.replayer(0, outside, (0,)), Counting)
