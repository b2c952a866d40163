"""Which runs a culprit's divergence is credited to (fuzzer/rates.py `credited`): its own
output's, never another culprit's that leads to the same artifact (issue 30: a race culprit
above a clock step was credited with every build the clock changed the binary in)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fuzzer import findings, rates
from fuzzer.model import ArtifactFinding, Culprit, Kind, RunSummary, VariantSummary

RUNS = range(1, 7)
BINARY = "bin/tool"


def _artifact(path: str, diverged: set[int]) -> ArtifactFinding:
    same = [0, *(r for r in RUNS if r not in diverged)]
    return ArtifactFinding(path, 2, [VariantSummary("A", "a", same), VariantSummary("B", "b", sorted(diverged))],
                           [], [], False)


def _culprit(i: int, kind: Kind = Kind.INTRINSIC) -> Culprit:
    own = f"gen/{i}.h"
    return Culprit(f"step {i}", ["step", str(i)], ".", [own], kind, chain=[BINARY, own])


runs_subset = st.sets(st.sampled_from(list(RUNS)))


@st.composite
def builds(draw):
    """Culprits below one binary, each own output diverging in some runs (or not compared:
    None); the binary diverges in every run one of them did, and maybe in more."""
    own = draw(st.lists(st.one_of(st.none(), runs_subset), min_size=1, max_size=4))
    extra = draw(runs_subset)
    culprits = [_culprit(i) for i in range(len(own))]
    binary = set().union(extra, *(s for s in own if s))
    artifacts = [_artifact(f"gen/{i}.h", s) for i, s in enumerate(own) if s] + ([_artifact(BINARY, binary)] if binary else [])
    return culprits, own, binary, artifacts


@given(builds())
def test_a_run_is_never_credited_to_a_culprit_when_another_ones_own_output_alone_diverged(drawn):
    culprits, own, _, artifacts = drawn
    for i, culprit in enumerate(culprits):
        credit = rates.credited(culprit, culprits, artifacts)
        if credit is None:
            continue
        assert not credit.own & credit.shared
        mine = own[i] or set()
        assert mine <= credit.own  # its own output diverged: its run
        others = set().union(*(s or set() for j, s in enumerate(own) if j != i))
        assert not (others - mine) & (credit.own | credit.shared)


@given(builds())
def test_every_run_the_binary_diverged_in_is_credited_or_shared(drawn):
    culprits, _, binary, artifacts = drawn
    credits = [c for c in (rates.credited(c, culprits, artifacts) for c in culprits) if c is not None]
    assert binary <= set().union(*(c.own | c.shared for c in credits))


@given(runs_subset, runs_subset)
def test_one_culprit_alone_is_credited_with_every_run_its_output_or_binary_diverged(own, extra):
    culprit = _culprit(0)
    artifacts = ([_artifact("gen/0.h", own)] if own else []) + ([_artifact(BINARY, own | extra)] if own | extra else [])
    credit = rates.credited(culprit, [culprit], artifacts)
    assert (credit is None) == (not own | extra)
    if credit is not None:
        assert credit.own == own | extra and not credit.shared


def test_a_race_above_a_clock_step_gets_none_of_the_clocks_builds():
    """The fossil shape: the link races a `mkdir` and fails now and then; every build the
    binary differed in, it differed because the clock step's header did."""
    clock = _culprit(0)
    race = Culprit("cc -o bld/translate", ["cc"], ".", ["bld/translate"], Kind.RACE, chain=[BINARY])
    artifacts = [_artifact("gen/0.h", {1, 2, 3}), _artifact(BINARY, {1, 2, 3})]
    runs = [RunSummary(i, {}, "ok", 0, 1.0, "d", "A") for i in range(0, 7)]
    counted = rates.counts(runs, artifacts, [race, clock], [])
    assert counted[findings.of_culprit(race).id] == rates.Count(0, 6)
    assert counted[findings.of_culprit(clock).id] == rates.Count(3, 6)


def test_two_culprits_leading_to_a_binary_whose_own_outputs_did_not_diverge_share_it():
    first, second = _culprit(0), _culprit(1)
    artifacts = [_artifact(BINARY, {2, 4})]
    runs = [RunSummary(i, {}, "ok", 0, 1.0, "d", "A") for i in range(0, 7)]
    counted = rates.counts(runs, artifacts, [first, second], [])
    rate = counted[findings.of_culprit(first).id].rate()
    assert (rate.seen, rate.shared) == (0, 2)


@given(runs_subset, runs_subset)
def test_a_culprit_whose_outputs_were_compared_gets_only_the_runs_they_diverged_in(own, extra):
    """Its outputs were the reference's in every other run: the binary's divergence there is
    not its doing, even with no other culprit to credit (fossil: the tool links racing
    `mkdir bld` lead to VERSION.h, which the clock changed in every build)."""
    culprit = _culprit(0)
    artifacts = ([_artifact("gen/0.h", own)] if own else []) + ([_artifact(BINARY, own | extra)] if own | extra else [])
    credit = rates.credited(culprit, [culprit], artifacts, frozenset({"gen/0.h", BINARY}))
    if credit is not None:
        assert credit.own == own and not credit.shared


def test_a_race_alone_above_the_clocks_file_gets_none_of_its_builds_when_its_outputs_were_compared():
    race = Culprit("cc -o bld/mkversion", ["cc"], ".", ["bld/mkversion", "bld/translate"], Kind.RACE,
                   chain=["bld/VERSION.h", "bld/mkversion"])
    runs = [RunSummary(i, {}, "ok", 0, 1.0, "d", "A") for i in range(0, 7)]
    artifacts = [_artifact("bld/VERSION.h", set(RUNS))]
    compared = frozenset({"bld/VERSION.h", "bld/mkversion", "bld/translate"})
    assert rates.counts(runs, artifacts, [race], [], compared)[findings.of_culprit(race).id] == rates.Count(0, 6)
    assert rates.counts(runs, artifacts, [race], [])[findings.of_culprit(race).id] == rates.Count(6, 6)
