"""Hazard-guided schedules: targets from one trace, the hold library, confirmed hazards."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from fuzzer import guided, hold, structs
from fuzzer.model import Hazard
from fuzzer.plan import Perturbation
from fuzzer.trace.synthetic import FakeStep, synthetic_trace


BASE = Perturbation(8, (0, 1), 0.6, 5)


def near_miss():
    """The generator ends 40 ms before the compile reads its header: no overlap, no hazard."""
    return synthetic_trace([
        FakeStep("gen > config.h", 0.0, 0.01, writes={"config.h": 0.009}),
        FakeStep("cc -c main.c", 0.05, 0.3, reads={"main.c": 0.06, "config.h": 0.08}, writes={"main.o": 0.29}),
        FakeStep("cc -c util.c", 0.05, 0.3, reads={"util.c": 0.06}),
    ])


def test_a_near_miss_becomes_a_run_holding_the_writer_back():
    (target,) = guided.targets(near_miss(), BASE)
    flip = target.flips[0]
    assert (flip.type, flip.file, target.held, flip.other) == (
        "read-before-write", "config.h", "gen > config.h", "cc -c main.c")
    assert target.ms >= 80 * guided.MARGIN  # long enough to let the compile look first
    p = target.perturbation
    assert (p.jobs, p.cpus, p.jitter) == (8, (0, 1), 0.0)  # no jitter: the hold alone explains a divergence
    value = dict(p.variations)["hold"]
    assert value.endswith(hold.argv_hash(("/bin/sh", "-c", "gen > config.h")))


def test_targets_are_bounded_and_one_per_step_held():
    steps = [FakeStep(f"gen{i} > h{i}.h", 0.0, 0.01, writes={f"h{i}.h": 0.009}) for i in range(10)]
    steps += [FakeStep(f"cc -c m{i}.c", 0.05, 0.3, reads={f"h{i}.h": 0.08, f"h{(i + 1) % 10}.h": 0.09})
              for i in range(10)]
    found = guided.targets(synthetic_trace(steps), BASE)
    assert len(found) == guided.MAX_TARGETS
    assert len({t.held for t in found}) == len(found)
    assert all(len(t.flips) == 2 for t in found)  # each header is read by two compiles


def test_a_target_that_manifested_confirms_its_hazard_with_a_replay_command():
    (target,) = guided.targets(near_miss(), BASE)
    latent = Hazard("write-write", "other.log", "a", "b")
    hazards = guided.confirmed([(target, 2, list(target.flips))], [latent], lambda t: "buildfuzz replay --jobs 8 ...")
    assert hazards[0] is latent
    assert (hazards[1].status, hazards[1].file, hazards[1].reproduce) == ("confirmed", "config.h",
                                                                        "buildfuzz replay --jobs 8 ...")
    assert guided.confirmed([(target, 2, [])], [latent], lambda t: "") == [latent]


def test_a_confirmed_hazard_keeps_the_edge_its_build_lacks():
    (target,) = guided.targets(near_miss(), BASE)
    flip = target.flips[0]
    known = Hazard(flip.type, flip.file, flip.other, target.held, missing_edge="main.o: config.h", rule="Makefile:4",
                   runs=[3], traced=["traced reference"])
    [confirmed] = guided.confirmed([(target, 2, [flip])], [known], lambda t: "buildfuzz replay ...")
    assert (confirmed.status, confirmed.missing_edge, confirmed.rule) == ("confirmed", "main.o: config.h", "Makefile:4")
    # the held run joins the runs that show it, by number, and the report still decodes
    assert (confirmed.runs, confirmed.traced) == ([3, 2], ["traced reference"])
    assert structs.convert(structs.to_data(confirmed), Hazard) == confirmed


@pytest.mark.needs("hold")
def test_the_hold_delays_exactly_the_named_process():
    argv = ("/bin/sh", "-c", "true held")
    env = hold.environment(hold.value(argv, 300), dict(os.environ))
    started = time.monotonic()
    subprocess.run(list(argv), env=env, check=True)
    held = time.monotonic() - started
    started = time.monotonic()
    subprocess.run(["/bin/sh", "-c", "true other"], env=env, check=True)
    other = time.monotonic() - started
    assert held >= 0.3 > other  # a lower bound, not a timing target: the sleep is the mechanism itself


def test_only_a_difference_in_what_the_flip_touches_confirms():
    (target,) = guided.targets(near_miss(), BASE)
    assert "config.h" in target.flips[0].telling
    assert guided.manifested(target, None, "main.c:2: fatal error: config.h: No such file\n*** [main.o] Error 1")
    assert not guided.manifested(target, None, "lexer.c: fatal error: parser.h: No such file")  # another race
    echoed = "gen > config.h\ngcc -c main.c -o main.o\nlexer.c: fatal error: parser.h: No such file\n*** [lexer.o] Error 1"
    assert not guided.manifested(target, None, echoed)  # its files only in a command make echoed
    assert not guided.manifested(target, ["unrelated.log"])  # changed, but not by this flip
    reader_output = synthetic_trace([FakeStep("gen > config.h", 0.0, 0.01, writes={"config.h": 0.009}),
                                     FakeStep("cc -c main.c", 0.05, 0.3, reads={"config.h": 0.08},
                                              writes={"main.o": 0.29})])
    (target,) = guided.targets(reader_output, BASE)
    assert guided.manifested(target, ["main.o", "app"])
    # a run without a hold differed there too (a build date): the held run's difference is no evidence
    assert not guided.manifested(target, ["main.o", "app"], unheld=frozenset({"main.o", "app"}))
    assert guided.manifested(target, ["main.o", "app"], unheld=frozenset({"app"}))


def test_a_held_step_confirms_whichever_of_its_conflicts_the_run_showed():
    """Holding one generator can flip its parser.c reader or its parser.h reader; the
    failure log says which."""
    trace = synthetic_trace([
        FakeStep("gen parser", 0.0, 0.05, writes={"parser.c": 0.04, "parser.h": 0.045}),
        FakeStep("cc -c parser.c", 0.06, 0.3, reads={"parser.c": 0.07, "parser.h": 0.08}, writes={"parser.o": 0.29}),
        FakeStep("cc -c lexer.c", 0.09, 0.3, reads={"lexer.c": 0.1, "parser.h": 0.11}, writes={"lexer.o": 0.29}),
    ])
    (target,) = guided.targets(trace, BASE)
    shown = guided.manifested(target, None, "lexer.c:3: fatal error: parser.h: No such file\n*** [lexer.o] Error 1")
    assert [(f.file, f.other) for f in shown] == [("parser.h", "cc -c lexer.c")]


def phony_dirs():
    """`dirs` makes build/ and build/object/; two compiles write into build/object/ without
    depending on it; the link writes build/app into build/ after every object."""
    return synthetic_trace([
        FakeStep("mkdir -p build/object", 0.0, 0.01, mkdirs={"build": 0.005, "build/object": 0.006}),
        FakeStep("cc -c app.c -o build/object/app.o", 0.02, 0.2, reads={"app.c": 0.03},
                 writes={"build/object/app.o": 0.19}),
        FakeStep("cc -c util.c -o build/object/util.o", 0.02, 0.2, reads={"util.c": 0.03},
                 writes={"build/object/util.o": 0.19}),
        FakeStep("cc -o build/app build/object/app.o build/object/util.o", 0.5, 0.6,
                 reads={"build/object/app.o": 0.51, "build/object/util.o": 0.52}, writes={"build/app": 0.59}),
    ])


# holding `dirs`: the compile of app.c finds no build/object/ (its log names build/ and `app` too)
HELD_DIRS_FAILED = ("/bin/sh: 1: cannot create build/object/app.o: Directory nonexistent\n"
                    "make: *** [Makefile:27: build/object/app.o] Error 2\n")


def held_dirs() -> guided.Target:
    return next(t for t in guided.targets(phony_dirs(), BASE) if t.held == "mkdir -p build/object")


def test_a_held_run_failing_in_another_step_confirms_nothing_of_a_third():
    """Holding `dirs` makes a compile fail: that confirms the compile's race with `dirs`, not
    a mkdir race of the link on build/, which is no party to the failure."""
    target = held_dirs()
    assert "build/" in {f.file for f in target.flips}  # the link's conflict was a target too
    shown = guided.manifested(target, None, HELD_DIRS_FAILED)
    assert [(f.file, f.other) for f in shown] == [("build/object/", "cc -c app.c -o build/object/app.o")]
    # a run without a hold failed on that same compile: the held run's failure shows nothing new
    assert not guided.manifested(target, None, HELD_DIRS_FAILED, unheld=frozenset({"build/object/app.o"}))


def test_a_confirmed_hazard_rests_on_the_failing_steps_own_conflict():
    target = held_dirs()
    hazards = guided.confirmed([(target, 2, guided.manifested(target, None, HELD_DIRS_FAILED))], [], lambda t: "")
    assert [(h.file, h.status, h.writer) for h in hazards] == [("build/object/", "confirmed", "mkdir -p build/object")]
