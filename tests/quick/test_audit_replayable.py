"""Whether a step can be replayed alone, decided from what really happened: an open for
writing that wrote nothing (dpkg-genbuildinfo locking debian/control) is no rewrite, by
the traced build's mtimes; and a step that cannot be replayed whole is audited through the
smallest process inside it that wrote its outputs and can be."""

from __future__ import annotations

import textwrap

from fuzzer.explain import audit
from fuzzer.explain.writer import ReplayTargets, mtimes_of
from fuzzer.observe import Entry, Manifest
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.parse import parse_lines
from fuzzer.trace.processes import track_processes
from fuzzer.trace.steps import build_trace
from fuzzer.trace.writers import step_not_replayable, writer_of

WS = "/ws"
S = 1_000_000_000  # ns a second


def trace(text: str):
    lines = textwrap.dedent(text).strip().splitlines(keepends=True)
    return build_trace(track_processes(parse_lines(lines), WS), WS)


# `cat control > out.txt`, then a later step opens control O_WRONLY (a lock) or renames over it
LOCKED = """
    1 1000.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1000.1 clone(child_stack=NULL) = 2
    2 1000.2 execve("/bin/sh", ["/bin/sh", "-c", "cat control > out.txt"], 0x1 /* 1 vars */) = 0
    2 1000.3 openat(AT_FDCWD</ws>, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/out.txt>
    2 1000.4 openat(AT_FDCWD</ws>, "control", O_RDONLY) = 4</ws/control>
    2 1000.5 +++ exited with 0 +++
    1 1001.0 clone(child_stack=NULL) = 3
    3 1001.1 execve("/bin/sh", ["/bin/sh", "-c", "LATER"], 0x1 /* 1 vars */) = 0
    3 1001.2 OPEN
    3 1001.3 +++ exited with 0 +++
    1 1001.4 +++ exited with 0 +++
"""
LOCK = 'openat(AT_FDCWD</ws>, "control", O_WRONLY) = 3</ws/control>'
RENAME = 'renameat2(AT_FDCWD</ws>, "control.new", AT_FDCWD</ws>, "control", 0) = 0'


def locked(open_line: str = LOCK):
    t = trace(LOCKED.replace("OPEN", open_line))
    return t, next(s for s in t.steps if s.command == "cat control > out.txt")


def test_an_open_for_writing_that_left_the_file_as_it_was_is_no_rewrite():
    t, cat = locked()
    assert step_not_replayable(t, cat, {"control": 900 * S}) is None  # last modified long before the read
    plan = audit.plan(t, {"out.txt"}, 1.0, (), {}, {"control": 900 * S, "out.txt": 1000 * S})
    assert [a.step.command for a in plan.chosen] == ["cat control > out.txt"] and plan.unreplayable == ()


def test_a_file_modified_after_the_read_or_replaced_or_of_unknown_mtime_was_rewritten():
    t, cat = locked()
    rewrote = "read control, which `LATER` rewrote afterwards"
    assert step_not_replayable(t, cat, {"control": int(1001.25 * S)}) == rewrote  # written after the read
    assert step_not_replayable(t, cat, {"control": int(1000.39 * S)}) == rewrote  # within a clock tick of it
    assert step_not_replayable(t, cat, {}) == rewrote  # no manifest says otherwise
    t, cat = locked(RENAME)  # a rename brings another file's bytes, and keeps that file's mtime
    assert step_not_replayable(t, cat, {"control": 900 * S}) == rewrote


# `debian/rules binary`: its shell reads debian/control, which a later step replaces; the
# autom4te inside it, which wrote autom4te.cache/requests, did not read it
RULES = """
    1 1000.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1000.1 clone(child_stack=NULL) = 2
    2 1000.2 execve("/bin/sh", ["/bin/sh", "-c", "debian/rules binary"], 0x1 /* 1 vars */) = 0
    2 1000.3 openat(AT_FDCWD</ws>, "debian/control", O_RDONLY) = 3</ws/debian/control>
    2 1000.4 clone(child_stack=NULL) = 3
    3 1000.5 execve("/usr/bin/perl", ["perl", "autom4te", "configure.ac"], 0x1 /* 1 vars */) = 0
    3 1000.6 openat(AT_FDCWD</ws>, "configure.ac", O_RDONLY) = 3</ws/configure.ac>
    3 1000.7 openat(AT_FDCWD</ws>, "autom4te.cache/requests", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/autom4te.cache/requests>
    3 1000.8 +++ exited with 0 +++
    2 1000.9 +++ exited with 0 +++
    1 1001.0 clone(child_stack=NULL) = 4
    4 1001.1 execve("/bin/sh", ["/bin/sh", "-c", "mv control.new debian/control"], 0x1 /* 1 vars */) = 0
    4 1001.2 renameat2(AT_FDCWD</ws>, "control.new", AT_FDCWD</ws>, "debian/control", 0) = 0
    4 1001.3 +++ exited with 0 +++
    1 1001.4 +++ exited with 0 +++
"""


def test_a_step_not_replayable_whole_is_audited_through_its_smallest_replayable_writer():
    t = trace(RULES)
    rules = next(s for s in t.steps if s.command == "debian/rules binary")
    assert "debian/control" in step_not_replayable(t, rules)
    plan = audit.plan(t, {"autom4te.cache/requests"}, 1.0, (), {})
    assert [a.step.command for a in plan.chosen] == ["debian/rules binary"] and plan.unreplayable == ()
    writer = writer_of(t, rules, ("autom4te.cache/requests",))
    assert writer.process.argv == ("perl", "autom4te", "configure.ac") and not writer.is_step


def test_with_no_replayable_writer_inside_the_step_stays_not_replayable():
    t = trace(RULES.replace('"configure.ac", O_RDONLY', '"debian/control", O_RDONLY'))  # autom4te read it too
    plan = audit.plan(t, {"autom4te.cache/requests"}, 1.0, (), {})
    assert plan.chosen == ()
    (unreplayable,) = plan.unreplayable
    assert unreplayable.reason == "read debian/control, which `mv control.new debian/control` rewrote afterwards"


def test_localization_replays_the_writer_inside_when_the_later_open_left_its_input_as_it_was():
    locked = RULES.replace('"configure.ac", O_RDONLY', '"debian/control", O_RDONLY').replace(
        'renameat2(AT_FDCWD</ws>, "control.new", AT_FDCWD</ws>, "debian/control", 0) = 0',
        'openat(AT_FDCWD</ws>, "debian/control", O_WRONLY) = 3</ws/debian/control>')
    t = trace(locked)
    rules = next(s for s in t.steps if s.command == "debian/rules binary")
    candidate = RootCandidate(ref=rules, div=None, outputs=("autom4te.cache/requests",), explains=(),
                              input_differences=(), chain=(), failed=False)
    kept = ReplayTargets(t, t, 1, mtimes=mtimes_of(Manifest({"debian/control": Entry("file", "d", mtime_ns=900 * S)})))
    assert kept.of(candidate).replays_process and kept.of(candidate).call.argv == ("perl", "autom4te", "configure.ac")
    assert not ReplayTargets(t, t, 1).of(candidate).replays_process  # no manifest: the lock counts as a rewrite


# cmake's configure ends with `ninja -t restat`, which looks for the .ninja_log ninja writes later
PROBED = """
    1 1000.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1000.1 clone(child_stack=NULL) = 2
    2 1000.2 execve("/bin/sh", ["/bin/sh", "-c", "configure"], 0x1 /* 1 vars */) = 0
    2 1000.3 newfstatat(AT_FDCWD</ws>, ".ninja_log", 0x7ffd, 0) = -1 ENOENT (No such file or directory)
    2 1000.4 openat(AT_FDCWD</ws>, "build.ninja", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/build.ninja>
    2 1000.5 LOOK
    2 1000.6 +++ exited with 0 +++
    1 1001.0 clone(child_stack=NULL) = 3
    3 1001.1 execve("/bin/sh", ["/bin/sh", "-c", "ninja"], 0x1 /* 1 vars */) = 0
    3 1001.2 openat(AT_FDCWD</ws>, ".ninja_log", O_WRONLY|O_CREAT|O_APPEND, 0666) = 3</ws/.ninja_log>
    3 1001.3 +++ exited with 0 +++
    1 1001.4 +++ exited with 0 +++
"""


def test_a_file_looked_for_and_made_later_by_another_step_is_taken_away_for_the_replays():
    t = trace(PROBED.replace("LOOK", 'getpid() = 2'))
    configure = next(s for s in t.steps if s.command == "configure")
    assert step_not_replayable(t, configure) is None
    candidate = RootCandidate(ref=configure, div=None, outputs=("build.ninja",), explains=(),
                              input_differences=(), chain=(), failed=False)
    call = ReplayTargets(t, t, 1).of(candidate).call
    assert ".ninja_log" in call.created and ".ninja_log" in call.restored  # removed first, put back after


def test_a_file_looked_for_that_appeared_while_the_step_ran_keeps_it_unreplayable():
    # it found the file on a later look: it may have waited for ninja to make it
    t = trace(PROBED.replace("LOOK", 'newfstatat(AT_FDCWD</ws>, ".ninja_log", {st_size=0}, 0) = 0'))
    configure = next(s for s in t.steps if s.command == "configure")
    assert step_not_replayable(t, configure) == "looked for .ninja_log before `ninja` created it"


# `ar cru lib.a` looks for the archive it then creates; ranlib, a later step, rewrites it
ARCHIVED = """
    1 1000.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1000.1 clone(child_stack=NULL) = 2
    2 1000.2 execve("/usr/bin/ar", ["ar", "cru", "lib.a", "a.o"], 0x1 /* 1 vars */) = 0
    2 1000.3 newfstatat(AT_FDCWD</ws>, "lib.a", 0x7ffd, 0) = -1 ENOENT (No such file or directory)
    2 1000.4 openat(AT_FDCWD</ws>, "a.o", O_RDONLY) = 3</ws/a.o>
    2 1000.6 openat(AT_FDCWD</ws>, "lib.a", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/lib.a>
    2 1000.7 +++ exited with 0 +++
    1 1001.0 clone(child_stack=NULL) = 3
    3 1001.1 execve("/usr/bin/ranlib", ["ranlib", "lib.a"], 0x1 /* 1 vars */) = 0
    3 1001.2 openat(AT_FDCWD</ws>, "lib.a", O_RDWR) = 3</ws/lib.a>
    3 1001.3 +++ exited with 0 +++
    1 1001.4 +++ exited with 0 +++
"""


def test_a_file_the_step_looked_for_then_made_itself_is_replayed_from_its_absence():
    t = trace(ARCHIVED)
    ar = next(s for s in t.steps if s.command.startswith("ar "))
    assert step_not_replayable(t, ar) is None  # not "looked for lib.a before `ranlib lib.a` created it"
    candidate = RootCandidate(ref=ar, div=None, outputs=("lib.a",), explains=(), input_differences=(),
                              chain=(), failed=False)
    assert "lib.a" in ReplayTargets(t, t, 1).of(candidate).call.created  # removed before each replay


def test_a_file_another_process_made_between_the_look_and_the_steps_write_keeps_it_unreplayable():
    made_meanwhile = ARCHIVED.replace(
        '2 1000.4 openat(AT_FDCWD</ws>, "a.o", O_RDONLY) = 3</ws/a.o>',
        '2 1000.4 openat(AT_FDCWD</ws>, "a.o", O_RDONLY) = 3</ws/a.o>\n'
        '    1 1000.45 clone(child_stack=NULL) = 4\n'
        '    4 1000.46 execve("/bin/touch", ["touch", "lib.a"], 0x1 /* 1 vars */) = 0\n'
        '    4 1000.47 openat(AT_FDCWD</ws>, "lib.a", O_WRONLY|O_CREAT, 0666) = 3</ws/lib.a>\n'
        '    4 1000.48 +++ exited with 0 +++')
    t = trace(made_meanwhile)
    ar = next(s for s in t.steps if s.command.startswith("ar "))
    assert step_not_replayable(t, ar) == "looked for lib.a before `touch lib.a` created it"
