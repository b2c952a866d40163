"""Who wrote a file's bytes (fuzzer/trace/writers.py): through copies and renames anywhere,
down to the smallest process of a step that can be replayed alone."""

from __future__ import annotations

import textwrap

from fuzzer.trace.graph import find_roots
from fuzzer.trace.parse import parse_lines
from fuzzer.trace.processes import track_processes
from fuzzer.trace.steps import build_trace
from fuzzer.trace.writers import content_source, copied_input, delivered_from, writer_of

WS = "/ws"


def trace(text: str):
    lines = textwrap.dedent(text).strip().splitlines(keepends=True)
    return build_trace(track_processes(parse_lines(lines), WS), WS)


# pip wheel: pip (the build's root, a driver) runs the wheel builder, which writes the wheel
# under /tmp; pip copies it into dist/ and removes its temporary directory.
PIP = """
    1 1.0 execve("/usr/bin/python3", ["python3", "-m", "pip", "wheel", "."], 0x1 /* 1 vars */) = 0
    1 1.1 openat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/tmpq1/input.json>
    1 1.2 clone(child_stack=NULL) = 2
    2 1.3 execve("/usr/bin/python3", ["python3", "_in_process.py", "build_wheel", "/tmp/tmpq1"], 0x1 /* 1 vars */) = 0
    2 1.4 openat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", O_RDONLY) = 3</tmp/tmpq1/input.json>
    2 1.5 openat(AT_FDCWD</ws>, "src/x.py", O_RDONLY) = 3</ws/src/x.py>
    2 1.6 openat(AT_FDCWD</ws>, "/tmp/pip-wheel-ab/x.whl", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/pip-wheel-ab/x.whl>
    2 1.7 +++ exited with 0 +++
    1 1.8 openat(AT_FDCWD</ws>, "dist/x.whl", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 4</ws/dist/x.whl>
    1 1.9 sendfile(4</ws/dist/x.whl>, 3</tmp/pip-wheel-ab/x.whl>, 0x7ff, 8388608) = 6
    1 2.0 unlinkat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", 0) = 0
    1 2.1 unlinkat(AT_FDCWD</ws>, "/tmp/tmpq1", AT_REMOVEDIR) = 0
    1 2.2 +++ exited with 0 +++
"""


def test_a_file_a_driver_copied_leads_to_the_step_that_wrote_its_bytes():
    t = trace(PIP)
    (builder,) = t.steps
    assert t.writers("dist/x.whl") == ()
    assert delivered_from(t, "dist/x.whl") == "/tmp/pip-wheel-ab/x.whl"
    source = content_source(t, "dist/x.whl")
    assert (source.path, source.process.argv[1]) == ("/tmp/pip-wheel-ab/x.whl", "_in_process.py")
    (root,) = find_roots(t, t, {"dist/x.whl"})  # before: no root ("written by no traced step")
    assert root.step is builder and root.explains == ("dist/x.whl",)


def test_a_writer_whose_inputs_the_build_removed_is_not_replayable():
    t = trace(PIP)
    writer = writer_of(t, t.steps[0], ("dist/x.whl",))
    assert writer.is_step  # the step root itself is the unit: nothing smaller exists
    assert writer.wrote == ("/tmp/pip-wheel-ab/x.whl",)


BUILD_SH = """
    1 1.0 execve("/bin/sh", ["sh", "build.sh"], 0x1 /* 1 vars */) = 0
    1 1.1 clone(child_stack=NULL) = 2
    2 1.2 execve("/bin/sh", ["sh", "./configure.sh"], 0x1 /* 1 vars */) = 0
    2 1.3 openat(AT_FDCWD</ws>, "conftest.c", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/conftest.c>
    2 1.4 clone(child_stack=NULL) = 3
    3 1.5 execve("/usr/bin/perl", ["perl", "m4cache.pl", "configure.ac"], 0x1 /* 1 vars */) = 0
    3 1.6 openat(AT_FDCWD</ws>, "configure.ac", O_RDONLY) = 3</ws/configure.ac>
    3 1.7 openat(AT_FDCWD</ws>, "autom4te.cache/requests", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/autom4te.cache/requests>
    3 1.8 +++ exited with 0 +++
    2 1.9 clone(child_stack=NULL) = 4
    4 2.0 execve("/usr/bin/gcc", ["gcc", "conftest.c"], 0x1 /* 1 vars */) = 0
    4 2.1 openat(AT_FDCWD</ws>, "conftest.c", O_RDONLY) = 3</ws/conftest.c>
    4 2.2 openat(AT_FDCWD</ws>, "config.log", O_WRONLY|O_CREAT|O_APPEND, 0666) = 3</ws/config.log>
    4 2.3 +++ exited with 0 +++
    2 2.4 unlinkat(AT_FDCWD</ws>, "conftest.c", 0) = 0
    2 9.0 +++ exited with 0 +++
    1 9.1 clone(child_stack=NULL) = 5
    5 9.2 execve("/bin/sh", ["sh", "-c", "python3 mkwheel.py | python3 pack.py /tmp/x/out.whl"], 0x1 /* 1 vars */) = 0
    5 9.4 clone(child_stack=NULL) = 6
    6 9.5 dup2(3<pipe:[9]>, 0</dev/null>) = 0<pipe:[9]>
    6 9.6 execve("/usr/bin/python3", ["python3", "pack.py", "/tmp/x/out.whl"], 0x1 /* 1 vars */) = 0
    6 9.65 openat(AT_FDCWD</ws>, "/tmp/x/out.whl", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/x/out.whl>
    6 9.7 +++ exited with 0 +++
    5 9.8 +++ exited with 0 +++
    1 9.9 clone(child_stack=NULL) = 7
    7 10.0 execve("/bin/cp", ["cp", "/tmp/x/out.whl", "dist/"], 0x1 /* 1 vars */) = 0
    7 10.05 openat(AT_FDCWD</ws>, "dist/out.whl", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4</ws/dist/out.whl>
    7 10.1 copy_file_range(3</tmp/x/out.whl>, NULL, 4</ws/dist/out.whl>, NULL, 9223372035781033984, 0) = 6
    7 10.2 +++ exited with 0 +++
    1 10.3 +++ exited with 0 +++
"""


def test_the_writer_is_the_smallest_process_and_is_named_without_pids():
    t = trace(BUILD_SH)
    configure = t.steps[0]
    writer = writer_of(t, configure, ("autom4te.cache/requests",))
    assert not writer.is_step and writer.process.argv == ("perl", "m4cache.pl", "configure.ac")
    assert writer.wrote == ("autom4te.cache/requests",) and writer.passed_over == ()
    assert abs(writer.duration - 0.4) < 1e-9  # from its fork to its exit, not the step's 7.8 s
    assert writer.identity == "perl m4cache.pl configure.ac (in .), inside step sh ./configure.sh (in .)"
    renumbered = trace(BUILD_SH.replace(" 3 ", " 33 ").replace("= 3\n", "= 33\n"))
    assert writer_of(renumbered, renumbered.steps[0], ("autom4te.cache/requests",)).identity == writer.identity
    pip, again = trace(PIP), trace(PIP.replace("tmpq1", "tmpz9"))
    identities = [writer_of(t, t.steps[0], ("dist/x.whl",)).identity for t in (pip, again)]
    assert identities[0] == identities[1] and "tmpq1" not in identities[0]  # temporary names blanked


def test_a_writer_that_read_what_its_step_removed_afterwards_climbs_to_the_step():
    t = trace(BUILD_SH)
    writer = writer_of(t, t.steps[0], ("config.log",))
    assert writer.is_step
    assert writer.passed_over == ("`gcc conftest.c` read conftest.c, which `sh ./configure.sh` removed afterwards",)


def test_a_writer_fed_by_a_pipe_is_replayed_with_the_process_that_feeds_it():
    t = trace(BUILD_SH)
    line = next(s for s in t.steps if s.command.startswith("python3 mkwheel.py"))
    writer = writer_of(t, line, ("/tmp/x/out.whl",))
    assert writer.is_step and writer.process.argv[:2] == ("sh", "-c")  # the pipeline, producer included
    assert writer.passed_over == (
        "`python3 pack.py /tmp/x/out.whl` read its standard input from a pipe another process fed",)


def test_a_copy_made_by_another_step_leads_upstream_to_what_it_copied():
    t = trace(BUILD_SH)
    cp = next(s for s in t.steps if s.argv[0] == "cp")
    assert copied_input(t, cp, "dist/out.whl") == "/tmp/x/out.whl"
    (root,) = find_roots(t, t, {"dist/out.whl"})
    assert root.command == "python3 mkwheel.py | python3 pack.py /tmp/x/out.whl"  # not the `cp` that moved it
    assert root.chain == ("dist/out.whl", "/tmp/x/out.whl")


def test_a_copy_leads_upstream_only_when_what_it_copied_is_not_known_identical():
    # were /tmp/x/out.whl compared and identical in both builds, the copy could only differ
    # because cp raced its writer (or its bytes were changed after): cp is the root
    t = trace(BUILD_SH.replace('"/tmp/x/out.whl", "dist/"', '"/tmp/x/out.whl", "dist/out.whl"'))
    (copier,) = find_roots(t, t, {"dist/out.whl"}, identical={"/tmp/x/out.whl"})
    assert copier.command == "cp /tmp/x/out.whl dist/out.whl" and copier.chain == ("dist/out.whl",)
