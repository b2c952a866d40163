"""Metadata, proven by experiment: real one-line steps replayed with their inputs' mtimes
moved. A step that records mtimes follows a shift; one that sorts by them follows only a
reversal; one that reads only contents follows neither; and the tree is put back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fuzzer.execute import step_replay
from fuzzer.execute.guard import Guard
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.explain import metadata
from fuzzer.observe import Entry, Manifest

STEPS = {
    "records": "stat -c %Y a.o b.o > out",  # like `ar U`: the mtimes themselves
    "sorts": "ls -tr a.o b.o > out",  # like `ar rcs $(ls -tr ...)`: only their order
    "contents": "cat a.o b.o > out",
}


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(step_replay, "SPREAD_S", 0.0)  # no clock in these steps: no pacing
    root = tmp_path / "tree"
    root.mkdir()
    for i, name in enumerate(("a.o", "b.o")):
        (root / name).write_text(name)
        os.utime(root / name, ns=(1_700_000_000 * 10**9 + i * 10**9,) * 2)
    return root


def _manifest(tree: Path, shift_ns: int) -> Manifest:
    entries = {name: Entry("file", name, False, 3, (tree / name).stat().st_mtime_ns + shift_ns) for name in ("a.o", "b.o")}
    return Manifest(entries)


def _run(tree: Path, command: str, tmp_path: Path) -> list[str]:
    found = metadata.differed({"a.o", "b.o"}, {"out"}, _manifest(tree, 0), _manifest(tree, 2 * 10**9), False)
    call = StepCall(("/bin/sh", "-c", command), ".", {"PATH": os.environ["PATH"]}, 0, ("out",), ("out",))
    shown = []
    with Guard() as guard, StepReplayer(guard, tree, call, tuple(os.sched_getaffinity(0)), tmp_path / "logs") as replayer:
        stable = replayer.replay(step_replay.Variation("plain"), 2)
        assert stable.stable
        for experiment in metadata.experiments(found):
            if metadata.follows(replayer, stable.digests[0], found, experiment):
                shown.append(experiment.records)
    return shown


def test_a_step_that_records_mtimes_follows_their_shift(tree, tmp_path):
    before = {p.name: p.stat().st_mtime_ns for p in tree.iterdir()}
    assert _run(tree, STEPS["records"], tmp_path)[0] == "records its inputs' mtimes"
    assert {p: (tree / p).stat().st_mtime_ns for p in before if p != "out"} == {
        p: t for p, t in before.items() if p != "out"}  # put back as they were


def test_a_step_that_sorts_by_mtime_follows_only_their_order(tree, tmp_path):
    assert _run(tree, STEPS["sorts"], tmp_path) == ["orders its inputs by their mtimes"]


def test_a_step_that_reads_only_contents_follows_no_metadata(tree, tmp_path):
    assert _run(tree, STEPS["contents"], tmp_path) == []


def test_only_what_differed_between_the_builds_is_moved(tree):
    same = metadata.differed({"a.o", "b.o"}, set(), _manifest(tree, 0), _manifest(tree, 0), False)
    assert metadata.experiments(same) == [] and "were the same in both builds" in same.describe()
    one = metadata.differed({"a.o", "b.o", "out"}, {"out"}, _manifest(tree, 0), _manifest(tree, 10**9), True)
    assert one.mtimes == ("a.o", "b.o") and metadata.experiments(one) == [
        metadata.MTIMES, metadata.MTIME_ORDER, metadata.MODES]
