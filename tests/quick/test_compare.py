from hypothesis import given
from hypothesis import strategies as st

from fuzzer.compare import compare
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation


def run(index, files, jobs=1, cpus=(0, 1), jitter=0.0, status=RunStatus.OK):
    manifest = Manifest({p: Entry("file", d) for p, d in files.items()})
    seed = 1 if jitter else 0
    return RunRecord(index, Perturbation(jobs, cpus, jitter, seed), status, 0 if status is RunStatus.OK else 2, 1.0, manifest, "")


def test_identical_runs_are_reproducible():
    runs = [run(i, {"a": "1", "b": "2"}, jobs=1 + i) for i in range(4)]
    result = compare(runs)
    assert result.reproducible and result.checked == 2
    assert set(result.groups.values()) == {"A"}


def test_cpu_count_separates_variants():
    runs = [
        run(0, {"lib.a": "x"}, cpus=(0, 1)),
        run(1, {"lib.a": "y"}, jobs=8, cpus=(0,)),
        run(2, {"lib.a": "x"}, jobs=8, cpus=(0, 1)),
        run(3, {"lib.a": "y"}, jobs=2, cpus=(1,)),
    ]
    (artifact,) = compare(runs).divergent
    assert [v.runs for v in artifact.variants] == [(0, 2), (1, 3)]
    assert artifact.factors[0].axis == "cpus"
    assert "cpus in {2} → A" in artifact.factors[0].describe()
    assert all(f.axis != "jobs" for f in artifact.factors)


def test_same_conditions_flagged():
    runs = [run(0, {"o": "1"}), run(1, {"o": "2"}), run(2, {"o": "3"}, jobs=4)]
    (artifact,) = compare(runs).divergent
    assert artifact.same_conditions and len(artifact.variants) == 3


def test_missing_file_is_a_variant():
    (artifact,) = compare([run(0, {"a": "1", "b": "2"}), run(1, {"a": "1"}, jobs=2)]).divergent
    assert artifact.path == "b" and artifact.variants[1].identity == "absent"


def test_failed_runs_are_findings_only_when_reference_passed():
    ok = compare([run(0, {"a": "1"}), run(1, {}, jobs=4, status=RunStatus.FAILED)])
    assert ok.failed == (1,) and not ok.reproducible and not ok.divergent
    assert compare([run(0, {}, status=RunStatus.FAILED), run(1, {"a": "1"}, jobs=4)]).failed == ()


digests = st.sampled_from("pqr")
run_lists = st.lists(st.tuples(st.integers(1, 8), st.sampled_from([(0,), (1,), (0, 1)]), digests), min_size=1, max_size=12)


@given(run_lists)
def test_groups_partition_the_runs_and_factors_are_consistent(specs):
    runs = [run(i, {"out": d}, jobs=j, cpus=c) for i, (j, c, d) in enumerate(specs)]
    result = compare(runs)
    distinct = {d for _, _, d in specs}
    assert (len(distinct) > 1) == bool(result.divergent)
    for artifact in result.divergent:
        assert sorted(i for v in artifact.variants for i in v.runs) == list(range(len(runs)))
        assert artifact.variants[0].runs[0] == 0  # A is the reference's variant
        for factor in artifact.factors:
            # every value of a separating axis maps to exactly one variant
            values = [v for _, vs in factor.groups for v in vs]
            assert len(values) == len(set(values))


def test_an_axis_needs_two_runs_on_each_side():
    runs = [run(0, {"o": "x"}), run(1, {"o": "x"}, jobs=2), run(2, {"o": "y"}, jobs=5), run(3, {"o": "x"}, jobs=3)]
    (artifact,) = compare(runs).divergent
    assert artifact.factors == () and "jobs" in artifact.too_few_runs


@given(run_lists)
def test_every_claimed_separation_has_two_runs_per_variant(specs):
    runs = [run(i, {"out": d}, jobs=j, cpus=c) for i, (j, c, d) in enumerate(specs)]
    for artifact in compare(runs).divergent:
        if artifact.factors:
            assert all(len(v.runs) >= 2 for v in artifact.variants)
