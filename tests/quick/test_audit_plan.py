"""The step audit's plan: which steps reach a compared file, which cannot be replayed, and
the order (least recently audited, deliverables, the cheapest), from hand-written traces."""

from __future__ import annotations

import dataclasses

import pytest

from fuzzer.config import parse_check_steps
from fuzzer.errors import UsageError
from fuzzer.explain import audit
from fuzzer.trace.synthetic import FakeStep, synthetic_trace


def chain() -> list[FakeStep]:
    """gen_a → a.c → a.o → app; gen_b (slow) → b.c → app; gen_log → build.log; stray → x.tmp"""
    return [
        FakeStep("python3 gen_a.py", 1, 2, reads={"gen_a.py": 1.1}, writes={"a.c": 1.9}),
        FakeStep("python3 gen_b.py", 2, 9, reads={"gen_b.py": 2.1}, writes={"b.c": 8.9}),
        FakeStep("cc -c a.c", 10, 11, reads={"a.c": 10.1}, writes={"a.o": 10.9}),
        FakeStep("cc -o app a.o b.c", 12, 13, reads={"a.o": 12.1, "b.c": 12.2}, writes={"app": 12.9}),
        FakeStep("gen_log", 14, 14.5, writes={"build.log": 14.4}),
        FakeStep("stray", 15, 15.5, writes={"x.tmp": 15.4}),
    ]


def commands(items) -> list[str]:
    return [a.step.command for a in items]


def test_steps_upstream_of_a_compared_file_are_audited_on_those_outputs():
    trace = synthetic_trace(chain())
    found = audit.reaching_steps(trace, {"app", "build.log"})
    assert [(s.command, outputs) for s, outputs in found] == [
        ("python3 gen_a.py", ("a.c",)), ("python3 gen_b.py", ("b.c",)), ("cc -c a.c", ("a.o",)),
        ("cc -o app a.o b.c", ("app",)), ("gen_log", ("build.log",))]


def test_order_deliverables_first_then_cheapest_and_share_rounds_up():
    trace = synthetic_trace(chain())
    plan = audit.plan(trace, {"app", "build.log"}, 1.0, (), {})
    assert commands(plan.chosen) == ["python3 gen_a.py", "cc -c a.c", "cc -o app a.o b.c", "python3 gen_b.py",
                                     "gen_log"]
    half = audit.plan(trace, {"app", "build.log"}, 0.5, (), {})
    assert commands(half.chosen) == commands(plan.chosen)[:3]
    assert commands(half.deferred) == commands(plan.chosen)[3:]


def test_least_recently_audited_first():
    trace = synthetic_trace(chain())
    first = audit.plan(trace, {"app"}, 1.0, (), {})
    when = {a.identity: f"2026-01-01T00:00:0{i}" for i, a in enumerate(first.chosen)}
    when.pop(first.chosen[-1].identity)  # never audited: first
    later = audit.plan(trace, {"app"}, 0.5, (), when)
    assert commands(later.chosen) == [first.chosen[-1].step.command, first.chosen[0].step.command]
    assert later.chosen[1].last_audit == "2026-01-01T00:00:00"


def test_a_step_reading_a_device_or_an_input_rewritten_later_is_not_replayable():
    steps = chain()
    steps[0] = dataclasses.replace(steps[0], reads={"gen_a.py": 1.1, "/dev/sda": 1.2, "/dev/null": 1.3})
    steps[1] = dataclasses.replace(steps[1], reads={"gen_b.py": 2.1, "conf.h": 2.2})
    steps.append(FakeStep("touch conf.h", 20, 20.5, writes={"conf.h": 20.4}))
    plan = audit.plan(synthetic_trace(steps), {"app"}, 1.0, (), {})
    reasons = {u.step.command: u.reason for u in plan.unreplayable}
    assert reasons["python3 gen_a.py"] == "it read the device /dev/sda"
    assert "conf.h" in reasons["python3 gen_b.py"] and "touch conf.h" in reasons["python3 gen_b.py"]
    assert "python3 gen_a.py" not in commands(plan.chosen)


@pytest.mark.parametrize("text, share", [("all", 1.0), ("10%", 0.1), ("0.25", 0.25), ("1", 1.0), ("100%", 1.0)])
def test_check_steps_values(text, share):
    assert parse_check_steps(text) == pytest.approx(share)


@pytest.mark.parametrize("text", ["0", "0%", "1.5", "150%", "-0.1", "nan", "inf", "some", ""])
def test_check_steps_outside_zero_one_is_refused(text):
    with pytest.raises(UsageError, match="--check-steps"):
        parse_check_steps(text)
