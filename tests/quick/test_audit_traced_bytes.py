"""What the step audit compares a step's replays with: the traced build's bytes of its
outputs (the manifest's digests), only when those bytes are the step's own and a replay
starts from what the step started from."""

from __future__ import annotations

from fuzzer.explain import audit
from fuzzer.explain.audit_replays import traced_bytes
from fuzzer.explain.writer import ReplayTargets
from fuzzer.observe import Entry, Manifest
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

DIGEST = "0123456789abcdef0123456789abcdef"


def planned(steps, compared):
    trace = synthetic_trace(steps)
    chosen = audit.plan(trace, compared, 1.0, (), {}).chosen
    return {a.step.command: a for a in chosen}, ReplayTargets(trace, trace, 1)


def test_the_traced_bytes_are_the_manifests_digest_of_each_output():
    items, targets = planned([FakeStep("gen", 1, 2, writes={"out.txt": 1.5, "log.txt": 1.6})], {"out.txt", "log.txt"})
    manifest = Manifest({"out.txt": Entry("file", DIGEST), "log.txt": Entry("file", DIGEST[::-1])})
    assert traced_bytes(items["gen"], targets, manifest) == ({"out.txt": DIGEST, "log.txt": DIGEST[::-1]}, "")


def test_a_file_another_step_wrote_or_the_build_did_not_leave_is_not_the_steps_bytes():
    steps = [FakeStep("gen", 1, 2, writes={"out.txt": 1.5, "tmp.txt": 1.6}),
             FakeStep("stamp", 3, 4, writes={"out.txt": 3.5}),
             FakeStep("pack", 5, 6, reads={"tmp.txt": 5.1}, writes={"app": 5.5})]
    items, targets = planned(steps, {"out.txt", "app"})
    manifest = Manifest({"out.txt": Entry("file", DIGEST), "app": Entry("file", DIGEST)})
    for appender in ("gen", "stamp"):  # a replay starts from the final out.txt, not from what the step found
        assert traced_bytes(items[appender], targets, manifest) == (
            None, "another step also wrote out.txt in the traced build")
    gone = Manifest({"out.txt": Entry("file", DIGEST)})
    assert traced_bytes(items["pack"], targets, gone) == (None, "the traced build left no file app")


def test_a_file_there_before_the_step_wrote_it_is_not_compared():
    items, targets = planned([FakeStep("regen", 1, 2, reads={"out.txt": 1.1}, writes={"out.txt": 1.5})], {"out.txt"})
    manifest = Manifest({"out.txt": Entry("file", DIGEST)})
    assert traced_bytes(items["regen"], targets, manifest) == (None, "out.txt was there before the step wrote it")
