"""The campaign above execution, in milliseconds: a fake executor whose manifests follow
from the perturbation (and whose runs can finish out of order)."""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import structs
from fuzzer.campaign import state as campaign_state
from fuzzer.campaign import open_stored, run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.execute.fake import FakeExecutor
from fuzzer.execute.run import RunRequest
from fuzzer.explain import Localization, stabilizers
from fuzzer.model import RunKind
from fuzzer.explain.ablation import shrink
from fuzzer.explain.classify import Context, classify
from fuzzer.execute.step_replay import ReplayOutcome
from fuzzer.plan import Perturbation
from fuzzer.report import text
from fuzzer.store import Store
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.synthetic import FakeStep, synthetic_trace


def one_cpu_differs(p: Perturbation) -> dict[str, str]:
    """nproc-style output: 'y' on one CPU, 'x' otherwise; the rest never varies."""
    return {"out.txt": "y" if p.ncpus == 1 else "x", "lib.a": "same"}


def config(tmp_path, **overrides) -> FuzzConfig:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    base = FuzzConfig(source=source, command="make -j{jobs}", store=tmp_path / "store", runs=8, seed=3,
                      jobs=(1, 8), localize=False)
    return replace(base, **overrides)


def fake(outcome=one_cpu_differs, **kwargs):
    made = []

    def factory(spec):
        made.append(FakeExecutor(outcome, **kwargs))
        return made[-1]

    return factory, made


def test_a_divergence_is_found_and_runs_are_reported_in_index_order(tmp_path):
    factory, made = fake(slots=3)
    outcome = run_campaign(config(tmp_path), executor_factory=factory)
    report = outcome.report
    assert (report.verdict, outcome.exit_code) == ("unreproducible", 1)
    assert [r.index for r in report.runs] == list(range(8))
    assert [a.path for a in report.divergent_artifacts] == ["out.txt"]
    for run in report.runs:
        one_cpu = len(structs.convert(run.perturbation, Perturbation).cpus) == 1
        assert run.group == ("B" if one_cpu else "A")
    store = Store(tmp_path / "store")
    try:
        assert [r.index for r in store.runs(report.campaign)] == list(range(8))
    finally:
        store.close()


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2**31))
def test_labels_do_not_depend_on_how_many_runs_ran_at_once(slots, seed):
    def labels(tmp, n):
        factory, _ = fake(outcome=lambda p: {"o": str(p.jobs % 3)}, slots=n)
        report = run_campaign(config(tmp, seed=seed), executor_factory=factory).report
        return [r.group for r in report.runs]

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        assert labels(Path(a), 1) == labels(Path(b), slots)


def test_identical_builds_are_reproducible(tmp_path):
    factory, _ = fake(outcome=lambda p: {"a": "1"})
    outcome = run_campaign(config(tmp_path), executor_factory=factory)
    assert (outcome.report.verdict, outcome.exit_code) == ("reproducible", 0)


def test_the_budget_bounds_the_runs(tmp_path, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(campaign_state, "time", SimpleNamespace(monotonic=lambda: now[0]))

    def tick(seconds):
        now[0] += seconds

    factory, made = fake(outcome=lambda p: {"a": "1"}, wall_s=10.0, clock=tick)
    outcome = run_campaign(config(tmp_path, runs=50, budget_s=100.0), executor_factory=factory)
    runs = len(outcome.report.runs)
    assert 2 <= runs < 10 and outcome.report.exit_reason == "budget spent"
    assert now[0] <= 100.0 + 10.0  # inside the budget, plus at most the one build it could not foresee


def _scan_cannot_fit(tmp_path, monkeypatch):
    """A guided campaign of 4 runs of 10 s each, on a fake clock, whose 70 s budget cannot
    hold the hazard scan's traced build: its outcome and the fake executors made."""
    explore = importlib.import_module("fuzzer.campaign.explore")
    now = [0.0]
    monkeypatch.setattr(campaign_state, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(explore, "_guided", lambda campaign: True)
    monkeypatch.setattr("fuzzer.explain.scan_hazards", lambda *args: Localization())  # it traces for real

    def tick(seconds):
        now[0] += seconds

    factory, made = fake(outcome=lambda p: {"a": "1"}, wall_s=10.0, clock=tick)
    return run_campaign(config(tmp_path, runs=4, budget_s=70.0, localize=True), executor_factory=factory), made


def test_a_hazard_scan_the_budget_cannot_hold_leaves_the_drawn_runs_to_run(tmp_path, monkeypatch):
    """A traced build is reckoned at up to 4 builds' time: where that does not fit, the
    campaign goes on with untraced runs (which do fit) instead of ending after the reference."""
    outcome, made = _scan_cannot_fit(tmp_path, monkeypatch)
    assert len(outcome.report.runs) == 4 and outcome.report.verdict == "reproducible"
    assert not any(r.trace for r in made[0].requests)
    assert any(n.startswith("hazard scan skipped") for n in outcome.report.notes)


@pytest.mark.needs("make 4.4")
def test_without_a_hazard_scan_the_first_drawn_run_shuffles(tmp_path, monkeypatch):
    """The scan's trace would have told whether make runs; skipped (the budget), nothing
    will, and a budget this short may leave one drawn run: it shuffles."""
    _, made = _scan_cannot_fit(tmp_path, monkeypatch)
    assert [r.index for r in made[0].requests if "shuffle" in r.perturbation.varied][:1] == [1]


def test_an_interrupted_campaign_resumes_where_it_stopped(tmp_path):
    calls = []

    def interrupted_at_three(p):
        calls.append(p)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return {"a": "1"}

    factory, _ = fake(outcome=interrupted_at_three)
    first = run_campaign(config(tmp_path), executor_factory=factory)
    assert (first.report.verdict, first.exit_code) == ("inconclusive", 4)
    factory, made = fake(outcome=lambda p: {"a": "1"})
    second = run_campaign(config(tmp_path, resume=True), executor_factory=factory)
    assert second.report.campaign == first.report.campaign
    assert [r.index for r in made[0].requests] == list(range(3, 8))
    assert [r.index for r in second.report.runs] == list(range(8)) and second.exit_code == 0


def test_a_ctrl_c_during_the_builds_after_a_difference_keeps_the_verdict_and_resumes(tmp_path):
    calls = []

    def differs_then_interrupted(p):  # every build after the reference differs; Ctrl-C during the fourth
        calls.append(p)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return {"a": str(len(calls) > 1)}

    factory, made = fake(outcome=differs_then_interrupted)
    first = run_campaign(config(tmp_path, localize=True), executor_factory=factory)
    report = first.report
    assert (report.verdict, first.exit_code, report.exit_reason) == ("unreproducible", 1, "interrupted")
    assert len(report.runs) == 3 and len(made) == 1  # no localization: no executor after the builds'
    opening = text.render(report).split("\n\n")[0]
    assert "--resume" in opening and "--resume" in first.message  # at the top: what was cut, and how to go on
    assert "not recorded" in text.render(report)  # the first campaign's findings: shown, not recorded
    store = Store(tmp_path / "store")
    try:
        assert store.report(report.campaign) is not None  # `buildfuzz explain` reads it
    finally:
        store.close()
    factory, made = fake(outcome=lambda p: {"a": "1"})
    second = run_campaign(config(tmp_path, resume=True), executor_factory=factory)
    assert second.report.campaign == report.campaign and second.exit_code == 1
    assert [r.index for r in made[0].requests] == list(range(3, 8))
    assert second.report.exit_reason != "interrupted"


@pytest.mark.parametrize("outcome, verdict, code", [(one_cpu_differs, "unreproducible", 1),
                                                     (lambda p: {"a": "1"}, "inconclusive", 4)])
def test_a_ctrl_c_after_the_builds_keeps_what_they_showed_and_is_never_green(tmp_path, outcome, verdict, code):
    made = []

    def factory(spec):  # the builds' executor, then Ctrl-C as the next phase starts
        if made:
            raise KeyboardInterrupt
        made.append(FakeExecutor(outcome))
        return made[-1]

    report = run_campaign(config(tmp_path, localize=True), executor_factory=factory).report
    assert (report.verdict, report.exit_code, report.exit_reason) == (verdict, code, "all runs done")
    assert len(report.runs) == 8 and len(made) == 1  # no phase ran after the interrupted one


def test_shrinking_keeps_only_the_axis_that_matters(tmp_path):
    factory, _ = fake()
    report = run_campaign(config(tmp_path), executor_factory=factory).report
    campaign = open_stored(tmp_path / "store", report.campaign)
    try:
        divergent = Perturbation(8, (1,), 0.7, 42)
        found = shrink(campaign, FakeExecutor(one_cpu_differs), divergent)
    finally:
        campaign.store.close()
    assert found == Perturbation(1, (1,), 0.0, 0)


class ScriptedReplayer:
    """Replays whose digests are given: the classification must follow them."""

    def __init__(self, digests: list[str]):
        self.digests = digests

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def replay(self, variation=None, times=5, seen=None):
        return ReplayOutcome(tuple(self.digests[:times]), (0,) * times, 0)


@pytest.mark.parametrize("digests, kind", [(["a", "b", "c", "d", "e"], "intrinsic"), (["a"] * 5, "unknown")])
def test_a_step_that_varies_alone_is_intrinsic(digests, kind, monkeypatch):
    trace = synthetic_trace([FakeStep("python3 gen.py", 0, 1, reads={"gen.py": 0.1}, writes={"out.c": 0.9})])
    step = trace.steps[0]
    candidate = RootCandidate(step, step, ("out.c",), ("out.c",), (), ("out.c",), False)
    monkeypatch.setattr(stabilizers, "search", lambda replayer, plain, *options: stabilizers.StabilizerSearch((), (), 3, 0.0, ()))
    record = run_record(Perturbation(1, (0, 1), 0.0, 0))
    context = Context(record, replace(record, perturbation=Perturbation(4, (0,), 0.0, 0)),
                      lambda c: ScriptedReplayer(digests))
    monkeypatch.setattr(sys.modules["fuzzer.explain.classify"], "_tracked_axis", lambda *a: None)
    assert classify(candidate, context).kind == kind


def run_record(p: Perturbation):
    return FakeExecutor(lambda _: {"out.c": "x"}).run(RunRequest(0, p, RunKind.TRACE))


def test_a_report_says_which_buildfuzz_made_it_where_and_when(tmp_path):
    import fuzzer

    factory, _ = fake()
    origin = run_campaign(config(tmp_path), executor_factory=factory).report.origin
    assert origin.buildfuzz == fuzzer.__version__ and origin.host
    assert origin.started <= origin.ended and origin.ended.endswith("+00:00")
