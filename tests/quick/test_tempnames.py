"""Temporary names are noise everywhere: in step identity, finding ids, failure comparison
and the known-noise judgement of logs. No builds: names, synthetic traces, report objects."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import findings
from fuzzer.explain.classify import Context, classify
from fuzzer.model import Culprit, Hazard, RunSummary
from fuzzer.trace.graph import find_roots
from fuzzer.trace.synthetic import FakeStep, synthetic_trace
from fuzzer.trace.tempnames import TEMPORARY_FILES, identity, normalised


ALNUM = string.ascii_letters + string.digits


random6 = st.text(ALNUM, min_size=6, max_size=6)


hex5 = st.text("0123456789abcdef", min_size=5, max_size=5)


random10 = st.text(ALNUM, min_size=10, max_size=10)


def try_compile(scratch: str, target: str, flag: str = "-fno-such-flag") -> tuple[str, str]:
    """A CMake check's compile as a step: (command, cwd)."""
    cwd = f"build/CMakeFiles/CMakeScratch/TryCompile-{scratch}"
    return (f"/usr/bin/cc {flag} -o CMakeFiles/{target}.dir/src.c.o -c /ws/{cwd}/src.c", cwd)


# --- the names ------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(random6, random6, hex5, hex5)
def test_two_runs_of_one_cmake_check_are_one_step(scratch_a, scratch_b, target_a, target_b):
    a = try_compile(scratch_a, f"cmTC_{target_a}")
    b = try_compile(scratch_b, f"cmTC_{target_b}")
    assert identity(*a) == identity(*b)
    assert "TryCompile-XXXXXX" in identity(*a)[1] and "cmTC_XXXXX" in identity(*a)[0]


@settings(max_examples=80, deadline=None)
@given(random6, random6, hex5)
def test_different_checks_stay_different(scratch_a, scratch_b, target):
    a = try_compile(scratch_a, f"cmTC_{target}", "-Wall")
    b = try_compile(scratch_b, f"cmTC_{target}", "-Wextra")
    assert identity(*a) != identity(*b)


@settings(max_examples=80, deadline=None)
@given(random6, random6, random10, random10, st.integers(1, 4_000_000), st.integers(1, 4_000_000))
def test_gcc_mktemp_and_pid_names_are_blanked(cc_a, cc_b, tmp_a, tmp_b, pid_a, pid_b):
    line = "ld: /tmp/cc{}.o: in function main; kept in tmp.{}; pid {}"
    assert normalised(line.format(cc_a, tmp_a, pid_a)) == normalised(line.format(cc_b, tmp_b, pid_b))


@given(st.text(max_size=80))
def test_blanking_is_idempotent(text):
    once = normalised(text)
    assert normalised(once) == once


def test_what_is_not_random_is_kept():
    for text in ("gcc -O2 -Wall -c main.c -o main.o", "make -C lib-python install", "ar rcs libops.a a.o b.o",
                 "python3 gen.py ops.c", "build/CMakeFiles/app.dir", "cc -fno-strict-aliasing x.c"):
        assert normalised(text) == text
    assert normalised("/tmp/ccAb12Cd.s") == "/tmp/XXXXXX"
    assert normalised("out/conf.Ab3dEf") == "out/conf.XXXXXX"  # mkstemp keeps its template's prefix
    assert TEMPORARY_FILES.found(b"see TryCompile-I1rsuL and cmTC_f1560") == [b"TryCompile-I1rsuL", b"cmTC_f1560"]


# --- step identity and failures -------------------------------------------------------


def configure(scratch: str, target: str, link_exit: int = 0):
    """cmake's try-compile of a flag gcc rejects (exit 1 every time), then the real compile."""
    command, cwd = try_compile(scratch, target)
    return synthetic_trace([
        FakeStep(command, 0, 1, writes={f"{cwd}/CMakeFiles/{target}.dir/src.c.o": 0.5}, exit_code=1, cwd=cwd),
        FakeStep("cc -c main.c -o main.o", 2, 3, reads={"main.c": 2.1}, writes={"main.o": 2.5}, exit_code=link_exit),
    ])


def test_a_check_failing_in_every_run_is_no_root():
    ref, div = configure("I1rsuL", "cmTC_f1560"), configure("HFYb0B", "cmTC_7b6b4")
    assert [s.key for s in ref.steps] == [s.key for s in div.steps]
    assert find_roots(ref, div, set()) == []
    # the same check with its names unblanked would be a step that failed only in the divergent run
    (root,) = find_roots(configure("I1rsuL", "cmTC_f1560", link_exit=0), configure("HFYb0B", "cmTC_7b6b4", 1), set())
    assert root.command == "cc -c main.c -o main.o"


def test_a_failure_without_the_same_step_in_the_reference_does_not_claim_it_succeeded():
    ref = synthetic_trace([FakeStep("true", 0, 1)])
    div = synthetic_trace([FakeStep("true", 0, 1), FakeStep("cc -c late.c", 1, 2, exit_code=1)])
    (root,) = find_roots(ref, div, set())
    culprit = classify(root, Context(reference=None, divergent=None, replayer_for=None))
    assert culprit.kind == "unknown"
    assert "succeeded in the reference" not in culprit.evidence and "no step with its command" in culprit.evidence


# --- finding ids ----------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(random6, random6, hex5, hex5)
def test_finding_ids_do_not_follow_temporary_names(scratch_a, scratch_b, target_a, target_b):
    (command_a, cwd_a), (command_b, cwd_b) = try_compile(scratch_a, f"cmTC_{target_a}"), try_compile(
        scratch_b, f"cmTC_{target_b}")
    culprit = lambda command, cwd: Culprit(command=command, argv=[], cwd=cwd, outputs=[], kind="intrinsic")
    assert findings.of_culprit(culprit(command_a, cwd_a)) == findings.of_culprit(culprit(command_b, cwd_b))
    hazard = lambda cwd: Hazard("write-write", f"{cwd}/x.o", "a", "b")
    assert findings.of_hazard(hazard(cwd_a)) == findings.of_hazard(hazard(cwd_b))
    failed = lambda cwd: RunSummary(index=1, perturbation={}, status="failed", exit_code=1, wall_s=1.0, digest=None, group=None,
                                    log_tail=f"cc: error: {cwd}/src.c: No such file\n")
    assert findings.of_failure(failed(cwd_a)).id == findings.of_failure(failed(cwd_b)).id


def test_finding_ids_still_tell_different_things_apart():
    culprit = lambda command: Culprit(command=command, argv=[], cwd=".", outputs=[], kind="race")
    assert findings.of_culprit(culprit("cc -c a.c")) != findings.of_culprit(culprit("cc -c b.c"))
