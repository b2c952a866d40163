"""Temporary names are noise everywhere: in step identity, finding ids, failure comparison
and the known-noise judgement of logs. No builds: names, synthetic traces, report objects."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import findings
from fuzzer.explain.classify import Context, classify
from fuzzer.explain.noise import noise_between
from fuzzer.report.model import Culprit, Hazard, RunSummary
from fuzzer.trace.graph import find_roots
from fuzzer.trace.synthetic import FakeStep, synthetic_trace
from fuzzer.trace.tempnames import TEMPORARY_FILES, identity, normalised, renamed


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


# --- Debian's package metadata -------------------------------------------------------

BUILDINFO = """Format: 1.0
Source: hello
Binary: hello
Architecture: amd64
Version: 2.10-3
Checksums-Sha256:
 0b2e6b8a1e3f7f8d5fd7c3f7b4d7c6b3a0e1e2d9b7a8f9e0c1d2e3f4a5b6c7d8 53104 hello_2.10-3_amd64.deb
Build-Origin: Debian
Build-Architecture: amd64
Build-Date: {date}
Build-Path: /build/hello-2.10
"""


CHANGES = """Format: 1.8
Date: Sun, 14 Jan 2024 10:00:00 +0000
Source: hello
Checksums-Sha1:
 5e1c309dae7f45e0f39b1bf3ac3cd9db12e7d689 53104 hello_2.10-3_amd64.deb
 {sha1} {size} hello_2.10-3_amd64.buildinfo
Checksums-Sha256:
 0b2e6b8a1e3f7f8d5fd7c3f7b4d7c6b3a0e1e2d9b7a8f9e0c1d2e3f4a5b6c7d8 53104 hello_2.10-3_amd64.deb
 {sha256} {size} hello_2.10-3_amd64.buildinfo
Files:
 9a1bd43e15bd6de9ca5e2b2e32e0b6c2 53104 devel optional hello_2.10-3_amd64.deb
 {md5} {size} devel optional hello_2.10-3_amd64.buildinfo
"""


def changes(seed: str, size: int, deb: str = "9a1bd43e15bd6de9ca5e2b2e32e0b6c2") -> bytes:
    import hashlib

    digest = lambda name: hashlib.new(name, seed.encode()).hexdigest()
    text = CHANGES.format(sha1=digest("sha1"), sha256=digest("sha256"), md5=digest("md5"), size=size)
    return text.replace("9a1bd43e15bd6de9ca5e2b2e32e0b6c2", deb).encode()


def test_a_buildinfo_differing_in_its_build_date_is_known_noise():
    a = BUILDINFO.format(date="Tue, 01 Dec 2026 10:54:54 +0000").encode()
    b = BUILDINFO.format(date="Tue, 01 Dec 2026 10:55:31 +0000").encode()
    found = noise_between("../hello_2.10-3_amd64.buildinfo", a, b)
    assert found is not None and found.kinds == ("dates",) and "every build" in found.evidence()
    # a .deb checksum that differs is a finding, not noise
    assert noise_between("../hello_2.10-3_amd64.buildinfo", a, b.replace(b"0b2e6b8a", b"ffffffff")) is None


def test_a_changes_differing_in_the_buildinfo_checksums_is_known_noise():
    found = noise_between("../hello_2.10-3_amd64.changes", changes("one", 5612), changes("two", 5613))
    assert found is not None and found.kinds == ("checksums of the .buildinfo",)
    assert noise_between("../hello_2.10-3_amd64.changes", changes("one", 5612),
                         changes("two", 5612, deb="0" * 32)) is None  # the .deb's checksum: a real difference
    assert noise_between("build.log", changes("one", 5612), changes("two", 5612)) is None  # only in a .changes


CMAKE_ERROR_LOG = """Performing C SOURCE FILE Test HAVE_NO_SUCH_FLAG failed with the following output:
Change Dir: /ws/build/CMakeFiles/CMakeScratch/TryCompile-{scratch}

Run Build Command(s):/usr/bin/ninja cmTC_{target} && [1/2] Building C object CMakeFiles/cmTC_{target}.dir/src.c.o
FAILED: CMakeFiles/cmTC_{target}.dir/src.c.o
/usr/bin/cc -DHAVE_NO_SUCH_FLAG  -fno-such-flag -o CMakeFiles/cmTC_{target}.dir/src.c.o -c /ws/build/CMakeFiles/CMakeScratch/TryCompile-{scratch}/src.c
cc: error: unrecognized command-line option '-fno-such-flag'
Result: {result}
"""


@settings(max_examples=60, deadline=None)
@given(random6, random6, hex5, hex5)
def test_cmake_logs_differing_only_in_check_names_are_noise_and_a_result_is_not(scratch_a, scratch_b, target_a,
                                                                                 target_b):
    log = lambda scratch, target, result="1": CMAKE_ERROR_LOG.format(scratch=scratch, target=target,
                                                                     result=result).encode()
    a, b = log(scratch_a, target_a), log(scratch_b, target_b)
    found = noise_between("build/CMakeFiles/CMakeError.log", a, b)
    assert (found is None) == (a == b)
    assert found is None or found.kinds == ("names of temporary files",)
    assert noise_between("build/CMakeFiles/CMakeError.log", a, log(scratch_b, target_b, "0")) is None


def test_inputs_under_other_temporary_names_are_paired_not_one_run_only():
    a = {"build/CMakeFiles/CMakeScratch/TryCompile-I1rsuL/src.c", "config.h", "only-a.h"}
    b = {"build/CMakeFiles/CMakeScratch/TryCompile-HFYb0B/src.c", "config.h", "only-b.h"}
    assert renamed(a, b) == {"build/CMakeFiles/CMakeScratch/TryCompile-I1rsuL/src.c",
                             "build/CMakeFiles/CMakeScratch/TryCompile-HFYb0B/src.c"}
