"""The shuffle axis's schedule: a fresh seed per shuffled run, `reverse` once, and at least a
third of the drawn runs shuffled (issue 30: a -j1 shuffle-only failure that one seed in three
shows was missed when 12 to 20 runs shuffled 2 or 3 times, half of them `reverse`)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import axes
from fuzzer.model import Reason
from fuzzer.plan import Perturbation, Space, explore_plan, phases, schedule, with_guided

job_ranges = st.tuples(st.integers(1, 8), st.integers(0, 24)).map(lambda t: (t[0], t[0] + t[1]))
cpu_sets = st.lists(st.integers(0, 7), min_size=1, max_size=8, unique=True).map(lambda c: tuple(sorted(c)))
spaces = st.builds(Space, jobs=job_ranges, cpus=cpu_sets, vary_cpus=st.booleans(), vary_jitter=st.booleans())
SHUFFLE = axes.BY_NAME["shuffle"]
# the default order axes, and some environment ones beside them
VARIED = st.sampled_from([(SHUFFLE,), (SHUFFLE, axes.BY_NAME["dirorder"]),
                          (axes.BY_NAME["tz"], SHUFFLE, axes.BY_NAME["hashseed"])])


def shuffles(plan) -> list[str]:
    return [p.perturbation.varied["shuffle"] for p in plan if "shuffle" in p.perturbation.varied]


def seeded(plan) -> int:
    return sum(value != "reverse" for value in shuffles(plan))


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), st.integers(2, 60), VARIED)
def test_each_shuffled_run_has_a_fresh_seed_and_reverse_runs_once_at_most(space, seed, runs, varied):
    plan = explore_plan(axes.planned(space, seed, varied), runs)
    values = shuffles([p for p in plan if p.reason is not Reason.REPEAT])
    assert len(values) == len(set(values))
    assert all(v == "reverse" or v.isdecimal() for v in values)


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), VARIED, st.booleans())
def test_every_prefix_a_budget_may_cut_shuffles_a_third_of_its_drawn_runs(space, seed, varied, scan):
    """Rounded up (issue 30: a budget ended fossil's campaign after two drawn runs, none
    shuffled): without a scan the first drawn run shuffles, with one the second."""
    drawn = list(itertools.islice(axes.planned(space, seed, varied, scan=scan), 1, 80))
    for n in range(1, len(drawn) + 1):
        due = 0 if scan and n == 1 else -(-n // 3)
        assert len(shuffles(drawn[:n])) >= due and seeded(drawn[:n]) >= due - 1, n  # `reverse` once
    assert shuffles(drawn[:1]) == [] if scan else len(shuffles(drawn[:1])) == 1


@settings(max_examples=40, deadline=None)
@given(spaces, st.integers(0, 2**32), VARIED)
def test_the_scan_varies_no_axis_that_only_some_programs_read(space, seed, varied):
    """The scan's trace tells whether make runs at all: it must not shuffle itself."""
    scan = list(itertools.islice(axes.planned(space, seed, varied, scan=True), 1, 2))[0]
    assert not {a.name for a in varied if a.read_by} & dict(scan.perturbation.variations).keys()


def test_an_axis_is_unread_when_none_of_its_readers_ran():
    varied = (SHUFFLE, axes.BY_NAME["dirorder"])
    assert axes.unread(varied, frozenset({"ninja", "cc"})) == ("shuffle",)
    assert axes.unread(varied, frozenset({"sh", "gmake"})) == ()
    assert axes.unread((axes.BY_NAME["dirorder"],), frozenset()) == ()  # dirorder has no reader: every build


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), st.integers(2, 60), VARIED)
def test_a_plan_of_any_length_shuffles_a_third_of_its_drawn_runs(space, seed, runs, varied):
    plan = explore_plan(axes.planned(space, seed, varied), runs)
    drawn = [p for p in plan[1:] if p.reason in (Reason.EXTREME, Reason.SAMPLE)]
    assert len(shuffles(drawn)) >= -(-len(drawn) // 3)


@settings(max_examples=30, deadline=None)
@given(spaces, st.integers(0, 2**32), VARIED)
def test_the_schedule_is_a_function_of_its_seed_and_leaves_the_schedule_axes_alone(space, seed, varied):
    first = [p.perturbation for p in itertools.islice(axes.planned(space, seed, varied), 60)]
    assert first == [p.perturbation for p in itertools.islice(axes.planned(space, seed, varied), 60)]
    head = 1 + len(phases(space, seed)[1])  # the reference and the schedule's extremes
    inserted = sum(len(a.extremes) for a in varied)  # then one run per order/environment extreme
    core = [(p.jobs, p.cpus, p.jitter, p.seed) for p in [*first[:head], *first[head + inserted:]]]
    plain = list(itertools.islice(schedule(space, seed), len(core)))
    assert core == [(p.jobs, p.cpus, p.jitter, p.seed) for p in plain]


ENVIRONMENT = tuple(axes.BY_NAME[n] for n in ("tz", "umask", "buildpath", "hashseed"))


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), st.integers(0, 30))
def test_with_promised_axes_the_share_holds_once_every_extreme_has_room(space, seed, more):
    """A --runs too short for the extremes and one run per --vary axis pulls those runs
    forward (plan.fit); with room for them, a third of the drawn runs still shuffle."""
    varied = (SHUFFLE, *ENVIRONMENT)
    runs = 1 + len(phases(space, seed)[1]) + sum(len(a.extremes) for a in varied) + more
    plan = explore_plan(axes.planned(space, seed, varied), runs, axes.promised(varied))
    drawn = [p for p in plan[1:] if p.reason in (Reason.EXTREME, Reason.SAMPLE)]
    assert len(shuffles(drawn)) >= len(drawn) // 3


@settings(max_examples=60, deadline=None)
@given(spaces, st.integers(0, 2**32), st.integers(3, 40), VARIED, st.integers(0, 6))
def test_any_budget_cut_of_a_plan_with_held_targets_keeps_the_share_of_its_drawn_runs(space, seed, runs, varied,
                                                                                        targets):
    """Targets and their control go between the drawn runs (plan.with_guided): they are
    chosen, not drawn, and wherever the budget stops the campaign, the drawn runs before
    that point shuffled a third of the time, rounded up, the scan aside."""
    plan = explore_plan(axes.planned(space, seed, varied, scan=True), runs)
    held = [Perturbation(space.jobs[1], space.cpus).with_variation("hold", f"{i + 1}@{i:016x}") for i in range(targets)]
    if len(plan) > 2:
        plan = with_guided(plan, held, plan[1].perturbation.with_variation("hold", ""), runs)
    for cut in range(1, len(plan) + 1):
        drawn = [p for p in plan[1:cut] if p.reason in (Reason.EXTREME, Reason.SAMPLE)]
        due = 0 if len(drawn) <= 1 else -(-len(drawn) // 3)
        assert len(shuffles(drawn)) >= due, cut
