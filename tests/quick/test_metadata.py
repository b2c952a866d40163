"""Metadata, proven by experiment: real one-line steps replayed with their inputs' mtimes
moved. A step that records mtimes follows a shift; one that sorts by them follows only a
reversal; one that reads only contents follows neither; and the tree is put back. Then
classification: `order` only when the replays show it, and no false "mtimes did not
differ"."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fuzzer.execute import step_replay
from fuzzer.execute.guard import Guard
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.execute.step_replay import ReplayOutcome
from fuzzer.explain import metadata
from fuzzer.explain.classify import Context, classify
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.synthetic import FakeStep, synthetic_trace
from test_campaign_fake import run_record

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


class MetadataReplayer:
    """A step stable alone whose bytes follow its inputs' mtimes when `records` (else not)."""

    def __init__(self, records: bool):
        self.records, self.moved = records, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def replay(self, variation=None, times=5, seen=None):
        moved = variation is not None and variation.moved is not None and variation.moved.mtime_shift_ns
        self.moved.append(variation.moved if variation is not None else None)
        return ReplayOutcome(("moved" if moved and self.records else "same",) * times, (0,) * times, 0)


@pytest.mark.parametrize("records, kind", [(True, "order"), (False, "unknown")])
def test_an_archive_whose_inputs_mtimes_differed_is_order_only_when_a_replay_shows_it(records, kind, monkeypatch):
    trace = synthetic_trace([FakeStep("ar rcSU lib.a a.o b.o", 0, 1, reads={"a.o": 0.1, "b.o": 0.2},
                                      writes={"lib.a": 0.9})])
    step = trace.steps[0]
    candidate = RootCandidate(step, step, ("lib.a",), ("lib.a",), (), ("lib.a",), False)
    record = run_record(Perturbation(1, (0, 1), 0.0, 0))
    built = lambda t: Manifest({f: Entry("file", f, False, 1, t + i) for i, f in enumerate(("a.o", "b.o"))})
    reference, divergent = replace(record, manifest=built(10**9)), replace(record, manifest=built(5 * 10**9))
    replayer = MetadataReplayer(records)
    monkeypatch.setattr(sys.modules["fuzzer.explain.classify"], "_tracked_axis", lambda *a: None)
    culprit = classify(candidate, Context(reference, divergent, lambda c: replayer))
    assert culprit.kind == kind
    assert "the mtimes of 2 of its inputs differed between the builds" in culprit.evidence
    assert "mtimes did not differ" not in culprit.evidence and "neither" not in culprit.evidence
    if records:
        assert "it records its inputs' mtimes" in culprit.evidence and "`ar D`" in culprit.evidence
    else:
        assert "they left its output as it was: not enough evidence" in culprit.evidence
    assert sorted(replayer.moved[-1 if not records else -2].paths) == ["a.o", "b.o"]
