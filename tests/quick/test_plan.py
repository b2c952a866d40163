import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import structs
from fuzzer.plan import Perturbation, Space, format_cpus, parse_cpus, parse_jobs_range, schedule

cpu_sets = st.sets(st.integers(0, 63), min_size=1, max_size=16).map(lambda s: tuple(sorted(s)))
job_ranges = st.tuples(st.integers(1, 64), st.integers(0, 64)).map(lambda t: (t[0], t[0] + t[1]))
spaces = st.builds(Space, jobs=job_ranges, cpus=cpu_sets, vary_cpus=st.booleans(), vary_jitter=st.booleans())


def take(space, seed, n=40):
    return list(itertools.islice(schedule(space, seed), n))


@given(spaces, st.integers(0, 2**32))
def test_schedule_is_a_pure_function_of_space_and_seed(space, seed):
    assert take(space, seed) == take(space, seed)


@given(spaces, st.integers(0, 2**32))
def test_first_run_is_the_reference(space, seed):
    ref = take(space, seed, 1)[0]
    assert ref == Perturbation(jobs=space.jobs[0], cpus=space.cpus)


@given(spaces, st.integers(0, 2**32))
def test_every_point_stays_inside_the_space(space, seed):
    for p in take(space, seed):
        assert space.jobs[0] <= p.jobs <= space.jobs[1]
        assert p.cpus and set(p.cpus) <= set(space.cpus)
        if not space.vary_cpus:
            assert p.cpus == space.cpus
        if not space.vary_jitter:
            assert p.jitter == 0
        assert 0 <= p.jitter <= 1
        assert (p.jitter == 0) == (p.seed == 0)


@given(spaces, st.integers(0, 2**32))
def test_extremes_come_first(space, seed):
    early = take(space, seed, 4)[1:]
    if space.vary_jobs:
        assert any(p.jobs == space.jobs[1] for p in early)
    if space.vary_cpus and len(space.cpus) > 1:
        assert any(p.ncpus == 1 for p in early)
    if space.vary_jitter:
        assert any(p.jitter >= 0.5 for p in early)


@given(cpu_sets)
def test_cpu_list_round_trips(cpus):
    assert parse_cpus(format_cpus(cpus)) == cpus


@given(st.builds(Perturbation, jobs=st.integers(1, 99), cpus=cpu_sets, jitter=st.floats(0, 1), seed=st.integers(0, 2**32)))
def test_perturbation_json_round_trips(p):
    assert structs.decode(structs.encode(p), Perturbation) == p


@pytest.mark.parametrize("text, expected", [("8", (8, 8)), ("1-16", (1, 16)), ("3-3", (3, 3))])
def test_jobs_range(text, expected):
    assert parse_jobs_range(text) == expected


@pytest.mark.parametrize("text", ["0-4", "5-2", "x", "1-", "-3", ""])
def test_bad_jobs_range(text):
    with pytest.raises(ValueError):
        parse_jobs_range(text)


# --- the explore plan: its promises ---------------------------------------------------------

from fuzzer import axes  # noqa: E402
from fuzzer.model import Reason  # noqa: E402
from fuzzer.plan import Planned, explore_plan, smallest_runs, with_guided  # noqa: E402

VARIED = tuple(axes.BY_NAME[n] for n in ("shuffle", "tz", "umask", "buildpath"))
PROMISED = axes.promised(VARIED)
DELIBERATE = {Reason.CONTROL, Reason.REPEAT}


def test_promised_axes_are_the_environment_ones_asked_for():
    assert PROMISED == ("tz", "umask", "buildpath")
    assert smallest_runs(PROMISED) == 4


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), st.integers(smallest_runs(PROMISED), 40))
def test_no_two_runs_share_a_perturbation_unless_a_deliberate_repeat(space, seed, runs):
    plan = explore_plan(axes.planned(space, seed, VARIED), runs, PROMISED)
    assert len(plan) == runs and plan[0].reason is Reason.REFERENCE
    first = [p.perturbation for p in plan if p.reason not in DELIBERATE]
    assert len(first) == len(set(first))
    # a repeat only where the space ran out of distinct points
    assert all(p.perturbation in first for p in plan if p.reason is Reason.REPEAT)


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), st.integers(smallest_runs(PROMISED), 12))
def test_every_promised_axis_runs_within_the_first_runs(space, seed, runs):
    plan = explore_plan(axes.planned(space, seed, VARIED), runs, PROMISED)
    varied = {name for p in plan for name, _ in p.perturbation.variations}
    assert set(PROMISED) <= varied


def test_the_schedule_extremes_come_before_samples_and_a_short_plan_keeps_the_axes():
    space = Space(jobs=(1, 8), cpus=(0, 1))
    plan = explore_plan(axes.planned(space, 1, (axes.BY_NAME["buildpath"],)), 6, ("buildpath",))
    assert [p.reason for p in plan] == [Reason.REFERENCE, *[Reason.EXTREME] * 5]
    assert dict(plan[-1].perturbation.variations) == {"buildpath": "elsewhere"}
    assert any(p.perturbation.ncpus == 1 for p in plan)  # the one-CPU extreme is not pushed out


def test_a_space_with_one_point_repeats_it_and_says_so():
    space = Space(jobs=(4, 4), cpus=(0,), vary_cpus=False, vary_jitter=False)
    plan = explore_plan(axes.planned(space, 7, ()), 5)
    assert [p.reason for p in plan] == [Reason.REFERENCE, *[Reason.REPEAT] * 4]


def test_the_control_takes_the_place_of_a_run_with_its_settings():
    """Seen: the control repeated the `jobs=8 cpus=0-1 no jitter` extreme while the one-CPU
    extreme was cut. Now that extreme is the control, and the one-CPU extreme stays."""
    space = Space(jobs=(1, 8), cpus=(0, 1))
    plan = explore_plan(axes.planned(space, 3, ()), 8)
    control = Perturbation(8, (0, 1))
    assert control in [p.perturbation for p in plan]
    targets = [control.with_variation("hold", f"{ms}@abc") for ms in (100, 200, 300)]
    merged = with_guided(plan, targets, control, 8)
    perturbations = [p.perturbation for p in merged]
    assert len(perturbations) == len(set(perturbations)) == 8
    assert merged[:2] == plan[:2]
    assert [p.reason for p in merged[2:5:2]] == [Reason.TARGET, Reason.CONTROL]
    assert any(p.ncpus == 1 for p in perturbations)


def test_a_control_like_a_run_that_ran_already_is_a_labelled_repeat():
    space = Space(jobs=(8, 8), cpus=(0, 1), vary_cpus=False)
    plan = explore_plan(axes.planned(space, 3, ()), 6)
    control = plan[0].perturbation  # jobs fixed, every CPU: the reference's settings
    merged = with_guided(plan, [control.with_variation("hold", "100@abc")], control, 6)
    assert [p for p in merged if p.perturbation == control] == [plan[0], Planned(control, Reason.CONTROL)]


def test_too_few_runs_for_the_varied_axes_is_refused_with_the_count_that_works():
    with pytest.raises(axes.UsageError, match=r"--runs 3 is too small for --vary tz,umask,buildpath.* --runs 4 or more"):
        axes.require_runs(3, VARIED)
    axes.require_runs(4, VARIED)


# --- traced reruns: the divergent run's settings, exactly --------------------------------------


def test_traced_reruns_apply_the_divergent_runs_variations_exactly():
    """Seen: a build-path divergence traced again without reproducing it. Every traced
    rerun runs the divergent run's own perturbation, build path and all."""
    from types import SimpleNamespace

    from fuzzer.execute.fake import FakeExecutor
    from fuzzer.execute.run import RunRequest
    from fuzzer.explain.traced import trace_pair
    from fuzzer.model import RunKind

    moved = Perturbation(8, (0, 1)).with_variation("buildpath", "elsewhere").with_variation("tz", "UTC")
    files = lambda p: {"lib.so": "there" if dict(p.variations).get("buildpath") else "here"}
    executor = FakeExecutor(files)
    runs = [executor.run(RunRequest(i, p)) for i, p in enumerate([Perturbation(1, (0, 1)), Perturbation(8, (0,)), moved])]
    campaign = SimpleNamespace(
        runs=runs, seconds_left=lambda: 0.0,
        request=lambda kind, p, trace: RunRequest(0, p, kind, trace=trace),
        differs_from_reference=lambda r: r.manifest.entries["lib.so"].digest != runs[0].manifest.entries["lib.so"].digest)
    pair = trace_pair(campaign, SimpleNamespace(telling_runs=lambda: [2]), executor)
    traced = [r for r in executor.requests[3:] if r.kind is RunKind.TRACE]
    assert [r.perturbation for r in traced] == [moved] and pair.divergent.perturbation == moved
    assert [r.perturbation for r in executor.requests if r.kind is RunKind.TRACE_REFERENCE] == [runs[0].perturbation]
