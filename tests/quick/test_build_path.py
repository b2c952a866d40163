"""Below a wrapper (fuzzer/trace/producers.py, fuzzer/explain/build_path.py): the processes
under a step that made the bytes it delivered, and kind build-path for the one that recorded
the random directory it ran in, claimed only on the bytes of both traced builds."""

from __future__ import annotations

import string
import textwrap

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.explain.build_path import NO_BYTES, below_wrapper, random_part, recorded_directory, remedy
from fuzzer.fix import by_hand
from fuzzer.fix.build_path import prefix_map
from fuzzer.model import Culprit, Kind, WriterProcess
from fuzzer.trace.graph import find_roots
from fuzzer.trace.parse import parse_lines
from fuzzer.trace.processes import track_processes
from fuzzer.trace.producers import producers
from fuzzer.trace.steps import build_trace
from fuzzer.trace.writers import byte_sources, writer_of

WS = "/ws"
VARS = "0x1 /* 1 vars */"


def wrapper_trace(directory: str, wrapper: str = '"python3", "build_ext.py"'):
    """A wrapper run by make: makes `directory`, copies speed.c there, compiles (gcc: cc1,
    as) and links (gcc: ld) there, copies the library into the tree, removes the directory."""
    d = directory
    text = f"""
        1 1.0 execve("/usr/bin/make", ["make"], {VARS}) = 0
        1 1.1 clone(child_stack=NULL) = 2
        2 1.2 execve("/usr/bin/python3", [{wrapper}], {VARS}) = 0
        2 1.3 mkdir("{d}", 0700) = 0
        2 1.4 openat(AT_FDCWD</ws>, "speed.c", O_RDONLY) = 3</ws/speed.c>
        2 1.5 openat(AT_FDCWD</ws>, "{d}/speed.c", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4<{d}/speed.c>
        2 1.6 sendfile(4<{d}/speed.c>, 3</ws/speed.c>, NULL, 8388608) = 120
        2 1.7 vfork() = 3
        3 1.8 chdir("{d}") = 0
        3 1.9 execve("/usr/bin/gcc", ["gcc", "-g", "-c", "speed.c", "-o", "speed.o"], {VARS}) = 0
        3 2.0 vfork() = 4
        4 2.1 execve("/usr/lib/gcc/cc1", ["cc1", "speed.c", "-o", "/tmp/ccAB12cd.s"], {VARS}) = 0
        4 2.2 openat(AT_FDCWD<{d}>, "speed.c", O_RDONLY) = 3<{d}/speed.c>
        4 2.3 openat(AT_FDCWD<{d}>, "/tmp/ccAB12cd.s", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4</tmp/ccAB12cd.s>
        4 2.4 +++ exited with 0 +++
        3 2.5 vfork() = 5
        5 2.6 execve("/usr/bin/as", ["as", "-o", "speed.o", "/tmp/ccAB12cd.s"], {VARS}) = 0
        5 2.7 openat(AT_FDCWD<{d}>, "/tmp/ccAB12cd.s", O_RDONLY) = 3</tmp/ccAB12cd.s>
        5 2.8 openat(AT_FDCWD<{d}>, "speed.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4<{d}/speed.o>
        5 2.9 +++ exited with 0 +++
        3 3.0 +++ exited with 0 +++
        2 3.1 vfork() = 6
        6 3.2 chdir("{d}") = 0
        6 3.3 execve("/usr/bin/gcc", ["gcc", "-shared", "-o", "speed.so", "speed.o"], {VARS}) = 0
        6 3.4 vfork() = 7
        7 3.5 execve("/usr/bin/ld", ["ld", "-shared", "-o", "speed.so", "speed.o"], {VARS}) = 0
        7 3.55 newfstatat(AT_FDCWD<{d}>, "speed.so", 0x7ffd, 0) = -1 ENOENT (No such file or directory)
        7 3.6 openat(AT_FDCWD<{d}>, "speed.o", O_RDONLY) = 3<{d}/speed.o>
        7 3.7 openat(AT_FDCWD<{d}>, "speed.so", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4<{d}/speed.so>
        7 3.8 +++ exited with 0 +++
        6 3.9 +++ exited with 0 +++
        2 4.0 openat(AT_FDCWD</ws>, "{d}/speed.so", O_RDONLY) = 3<{d}/speed.so>
        2 4.1 openat(AT_FDCWD</ws>, "libspeed.so", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4</ws/libspeed.so>
        2 4.2 sendfile(4</ws/libspeed.so>, 3<{d}/speed.so>, NULL, 8388608) = 900
        2 4.3 unlinkat(AT_FDCWD</ws>, "{d}/speed.o", 0) = 0
        2 4.35 unlinkat(AT_FDCWD</ws>, "{d}/speed.so", 0) = 0
        2 4.4 unlinkat(AT_FDCWD</ws>, "{d}", AT_REMOVEDIR) = 0
        2 4.5 +++ exited with 0 +++
        1 4.6 +++ exited with 0 +++
    """
    lines = textwrap.dedent(text).strip().splitlines(keepends=True)
    return build_trace(track_processes(parse_lines(lines), WS), WS)


A, B = "/tmp/build-via-sdist-k3j9ab", "/tmp/build-via-sdist-q81zzt"


def culprit(kind=Kind.INTRINSIC, stabilized_by=()):
    return Culprit(command="python3 build_ext.py", argv=["python3", "build_ext.py"], cwd=".",
                   outputs=["libspeed.so"], kind=kind, stabilized_by=list(stabilized_by))


def holding(files: dict[str, bytes]):
    return files.get


def judged(a=A, b=B, ref=None, div=None, kind=Kind.INTRINSIC, stabilized_by=()):
    traces = (wrapper_trace(a), wrapper_trace(b))
    (root,) = find_roots(*traces, {"libspeed.so"})
    ref = holding({f"{a}/speed.o": b"\x7fELF..." + a.encode() + b"\0speed.c"}) if ref is None else ref
    div = holding({f"{b}/speed.o": b"\x7fELF..." + b.encode() + b"\0speed.c"}) if div is None else div
    return below_wrapper(culprit(kind, stabilized_by), root, traces, (ref, div))


def test_the_bytes_lead_below_the_wrapper_to_the_compile_and_the_link():
    t = wrapper_trace(A)
    (step,) = t.steps
    units = producers(t, step, byte_sources(t, step, ("libspeed.so",)))
    # downstream first: the link wrote what the wrapper copied, the compile what the link read
    assert [(u.process.execs[0][:2], u.wrote) for u in units] == [
        (("gcc", "-shared"), f"{A}/speed.so"), (("gcc", "-g"), f"{A}/speed.o")]
    assert all(u.process.cwd == A for u in units)


def test_the_link_is_passed_over_for_the_output_its_wrapper_removed_not_created():
    t = wrapper_trace(A)
    writer = writer_of(t, t.steps[0], ("libspeed.so",))
    assert writer.is_step
    assert f"looked for {A}/speed.so before `python3 build_ext.py` removed it" in writer.passed_over[0]


def test_a_compile_recording_its_random_directory_is_kind_build_path_named_by_the_compile():
    found = judged()
    writer = found.writer_process
    assert found.kind == Kind.BUILD_PATH
    assert (writer.argv[:2], writer.cwd, writer.wrote) == (["gcc", "-g"], A, [f"{A}/speed.o"])
    assert writer.recorded_dir == "/tmp/build-via-sdist-XXXXXX"
    assert writer.dir_made_by == "python3 build_ext.py" and writer.frontend == ""
    assert found.command == "python3 build_ext.py"  # the culprit still names the step


def test_the_output_s_bytes_serve_when_the_compile_s_are_not_at_hand():
    ref = holding({"libspeed.so": b"lib " + A.encode()})
    div = holding({"libspeed.so": b"lib " + B.encode()})
    assert judged(ref=ref, div=div).kind == Kind.BUILD_PATH


def test_no_claim_without_the_evidence():
    assert judged(b=A).kind == Kind.INTRINSIC  # one directory in both builds: nothing recorded differs
    assert judged(div=NO_BYTES).kind == Kind.INTRINSIC  # the divergent build's bytes are not at hand
    elsewhere = holding({f"{B}/speed.o": b"no directory in here"})
    assert judged(div=elsewhere).kind == Kind.INTRINSIC  # its bytes do not hold its directory
    swapped = holding({f"{B}/speed.o": A.encode()})
    assert judged(div=swapped).kind == Kind.INTRINSIC  # they hold the other build's
    assert judged(kind=Kind.RACE).kind == Kind.RACE


def test_a_stabiliser_of_the_replays_does_not_settle_a_directory_that_differs_between_builds():
    # a wheel's zip timestamps stable with SOURCE_DATE_EPOCH when replayed in one directory
    found = judged(stabilized_by=["SOURCE_DATE_EPOCH"])
    assert (found.kind, found.stabilized_by) == (Kind.BUILD_PATH, ["SOURCE_DATE_EPOCH"])


def test_the_directory_of_a_frontend_says_so():
    traces = (wrapper_trace(A, '"python3", "-m", "build", "--wheel"'),
              wrapper_trace(B, '"python3", "-m", "build", "--wheel"'))
    (root,) = find_roots(*traces, {"libspeed.so"})
    found = below_wrapper(culprit(), root, traces, (holding({"libspeed.so": A.encode()}),
                                                    holding({"libspeed.so": B.encode()})))
    assert (found.kind, found.writer_process.frontend) == (Kind.BUILD_PATH, "python -m build")
    assert "python -m build" in remedy(found.writer_process)


RANDOM = st.text(string.ascii_lowercase + string.digits + "_", min_size=1, max_size=12)


@given(prefix=st.sampled_from(["/tmp/build-via-sdist-", "/var/tmp/pip-req-build-", "/tmp/"]),
       a=RANDOM, b=RANDOM, tail=st.sampled_from(["", "/pkg-1.0"]))
def test_the_pattern_blanks_the_random_part_whole(prefix, a, b, tail):
    # whatever the two random parts share (a first letter, one the start of the other)
    pattern = random_part(f"{prefix}{a}{tail}", f"{prefix}{b}{tail}")
    assert pattern == (f"{prefix}{'X' * len(a)}{tail}" if a != b else f"{prefix}{a}{tail}")


def test_recorded_directory_needs_two_absolute_directories():
    t = wrapper_trace(A)
    (step,) = t.steps
    compile_ = producers(t, step, byte_sources(t, step, ("libspeed.so",)))[-1]
    everything = holding({f"{A}/speed.o": A.encode()})
    assert recorded_directory(compile_, compile_, (everything, everything), ("libspeed.so",)) is None


def test_the_fix_stage_says_the_flag_and_who_must_pass_it():
    writer = WriterProcess(command="gcc -g -c speed.c", argv=["gcc"], cwd=A, identity="", wrote=[], replayed=False,
                           recorded_dir="/tmp/build-via-sdist-XXXXXX", dir_made_by="python3 build_ext.py",
                           remedy_status="proven: before 3 distinct")
    found = Culprit(command="python3 build_ext.py", argv=[], cwd=".", outputs=[], kind=Kind.BUILD_PATH,
                    writer_process=writer, finding_id="f1")
    fixed = prefix_map(found)
    assert fixed.patch == "" and "python3 build_ext.py" in fixed.reason and writer.remedy_status in fixed.reason
    assert "-ffile-prefix-map=/tmp/build-via-sdist-XXXXXX=." in by_hand.remedy(found)
