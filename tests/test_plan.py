import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    assert Perturbation.from_json(p.to_json()) == p


@pytest.mark.parametrize("text, expected", [("8", (8, 8)), ("1-16", (1, 16)), ("3-3", (3, 3))])
def test_jobs_range(text, expected):
    assert parse_jobs_range(text) == expected


@pytest.mark.parametrize("text", ["0-4", "5-2", "x", "1-", "-3", ""])
def test_bad_jobs_range(text):
    with pytest.raises(ValueError):
        parse_jobs_range(text)
