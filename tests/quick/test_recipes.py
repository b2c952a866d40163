"""A recipe that ran twice at once is one cause: its lines are told apart from what make
ran next by the runs agreeing; one hazard lists every file its lines wrote, and its race
culprits are one culprit named by the line farthest upstream (never its `ar`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.explain.shared_cause import one_per_hazard
from fuzzer.model import Culprit, Kind
from fuzzer.trace.hazards import DUPLICATE, find_hazards
from fuzzer.trace.recipes import recipe_lines
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

GEN, MV, AR, LINK, CC = "sh gen.sh", "mv t.tmp t.c", "ar rcs libt.a t.o", "cc -o app main.o libt.a", "cc -c main.c"


def recipe_run(t0: float, gen_s: float, fail_mv: bool = False) -> list[FakeStep]:
    """gen.sh writes t.tmp, mv puts it in place, ar packs it: lines of one recipe."""
    mv_at = t0 + gen_s
    return [
        FakeStep(GEN, t0, mv_at, writes={"t.tmp": t0 + 0.05}),
        FakeStep(MV, mv_at, mv_at + 0.01, reads={"t.tmp": mv_at}, writes={"t.c": mv_at + 0.005},
                 exit_code=1 if fail_mv else 0),
        *([] if fail_mv else [FakeStep(AR, mv_at + 0.01, mv_at + 0.05, reads={"t.c": mv_at + 0.02},
                                       writes={"libt.a": mv_at + 0.04})]),
    ]


def twice_at_once(gen_a: float, gen_b: float, fail_mv: bool = False):
    """Two runs started together (one per target asked for), then whatever make ran next
    after each: another recipe after the first, nothing after the second."""
    first, second = recipe_run(0, gen_a), recipe_run(0.001, gen_b, fail_mv)
    after_first = max(s.end for s in first)
    return synthetic_trace([*first, *second, FakeStep(CC, after_first, after_first + 0.1, writes={"main.o": after_first + 0.05})])


def serial():
    """The reference: the recipe once, the link right after it."""
    run = recipe_run(0, 0.3)
    end = max(s.end for s in run)
    return synthetic_trace([*run, FakeStep(LINK, end, end + 0.1, reads={"libt.a": end}, writes={"app": end + 0.05})])


SLOWER = st.floats(0.2, 0.4), st.floats(0.5, 0.8)


@settings(max_examples=40, deadline=None)
@given(*SLOWER)
def test_the_recipes_lines_are_those_every_run_agrees_on(gen_a, gen_b):
    runs = recipe_lines([serial(), twice_at_once(gen_a, gen_b)], GEN, ".")
    assert [[s.command for s in run] for run in runs] == [[GEN, MV, AR]] * 3  # not the link, not main.o's compile


def test_without_a_trace_running_it_twice_a_line_is_only_itself():
    assert [[s.command for s in run] for run in recipe_lines([serial()], GEN, ".")] == [[GEN]]


def test_a_run_stopping_at_a_failed_line_ends_what_is_known_of_the_recipe():
    runs = recipe_lines([serial(), twice_at_once(0.3, 0.6, fail_mv=True)], MV, ".")
    assert {tuple(s.command for s in run) for run in runs} == {(GEN, MV)}


def test_one_hazard_lists_every_file_the_recipes_lines_wrote():
    (hazard,) = find_hazards([serial(), twice_at_once(0.3, 0.6)])
    assert hazard.type == DUPLICATE
    assert set(hazard.files) == {"t.tmp", "t.c", "libt.a"} and {GEN, MV, AR} <= set(hazard.steps)
    assert LINK not in hazard.steps and "main.o" not in hazard.files


def test_its_race_culprits_are_one_named_by_the_line_farthest_upstream():
    (hazard,) = find_hazards([serial(), twice_at_once(0.3, 0.6)])
    ar = Culprit(AR, ["ar"], ".", ["libt.a"], Kind.RACE, other_step=AR, chain=["app", "libt.a"])
    gen = Culprit(GEN, ["sh"], ".", ["t.tmp"], Kind.RACE, other_step=GEN, chain=["app", "libt.a", "t.c", "t.tmp"])
    unrelated = Culprit("gen.py", ["gen.py"], ".", ["x.c"], Kind.INTRINSIC)
    (one, other) = one_per_hazard([ar, unrelated, gen], [hazard])
    assert (one.command, set(one.steps), set(one.outputs)) == (GEN, {GEN, MV, AR}, {"libt.a", "t.tmp"})
    assert other.command == "gen.py"
