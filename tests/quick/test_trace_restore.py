"""Replays that restore what the build removed (fuzzer/trace/restore.py, execute/keep.py,
execute/step_replay.py): which removed inputs are put back, which version, where a replay
may put them, and that a link into the keep's stash is no access of the build's."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, strategies as st

from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.trace.paths import KEPT, PathNames
from fuzzer.trace.restore import CLOCK_SLACK_S, handed_down, kept_of
from fuzzer.trace.writers import restored_inputs, step_not_replayable, writer_of
from test_trace_writers import PIP, WS, trace


# make's shape of a backend hook: one line writes input.json, the next reads it, the last removes it
LINES = """
    1 1.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1.1 clone(child_stack=NULL) = 2
    2 1.2 execve("/bin/sh", ["sh", "-c", "frontend > /tmp/tmpq1/input.json"], 0x1 /* 1 vars */) = 0
    2 1.3 openat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/tmpq1/input.json>
    2 1.4 +++ exited with 0 +++
    1 1.5 clone(child_stack=NULL) = 3
    3 1.6 execve("/usr/bin/python3", ["python3", "backend.py", "/tmp/tmpq1/input.json"], 0x1 /* 1 vars */) = 0
    3 1.7 openat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", O_RDONLY) = 3</tmp/tmpq1/input.json>
    3 1.8 openat(AT_FDCWD</ws>, "meta.json", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/meta.json>
    3 1.9 +++ exited with 0 +++
    1 2.0 clone(child_stack=NULL) = 4
    4 2.1 execve("/bin/rm", ["rm", "-rf", "/tmp/tmpq1"], 0x1 /* 1 vars */) = 0
    4 2.2 linkat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", AT_FDCWD</ws>, "/tmp/.buildfuzz-kept-ab/4-1-2", 0) = 0
    4 2.3 unlinkat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", 0) = 0
    4 2.4 unlinkat(AT_FDCWD</ws>, "/tmp/tmpq1", AT_REMOVEDIR) = 0
    4 2.5 +++ exited with 0 +++
    1 2.6 +++ exited with 0 +++
"""
KEPT_AT = {"/tmp/tmpq1/input.json": ((2.21, "/k/new", 1.3),)}


def backend(t):
    return next(s for s in t.steps if s.argv[1] == "backend.py")


def test_a_step_whose_input_a_later_step_removed_is_replayable_with_it_kept():
    t = trace(LINES)
    assert step_not_replayable(t, backend(t)) == "read /tmp/tmpq1/input.json, which `rm -rf /tmp/tmpq1` removed afterwards"
    assert step_not_replayable(t, backend(t), kept=KEPT_AT) is None
    assert restored_inputs(t, backend(t).members, KEPT_AT) == {"/tmp/tmpq1/input.json": "/k/new"}


def test_a_link_into_the_keeps_stash_is_no_access_of_the_build():
    t = trace(LINES)
    rm = next(s for s in t.steps if s.argv[0] == "rm")
    assert "/tmp/tmpq1/input.json" not in rm.reads and rm.deletes.keys() == {"/tmp/tmpq1/input.json", "/tmp/tmpq1"}
    assert not any(KEPT in a.path for p in t.processes for a in p.accesses)
    assert PathNames(WS).relative(f"/ws/{KEPT}x/1") is None


def test_the_version_put_back_is_the_one_kept_when_it_was_removed_after_the_read():
    t = trace(LINES)
    older = {"/tmp/tmpq1/input.json": ((1.0, "/k/old", 0.5), (2.21, "/k/new", 1.3))}
    assert restored_inputs(t, backend(t).members, older) == {"/tmp/tmpq1/input.json": "/k/new"}
    too_late = {"/tmp/tmpq1/input.json": ((5.0, "/k/later", 1.3),)}  # kept at another removal: not what it read
    assert restored_inputs(t, backend(t).members, too_late) == {}


def test_nothing_is_put_back_when_the_file_was_rewritten_or_is_there_at_the_end():
    rewritten = LINES.replace('    1 2.0 clone', '    1 1.95 openat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", '
                              'O_WRONLY|O_TRUNC) = 5</tmp/tmpq1/input.json>\n    1 2.0 clone')
    t = trace(rewritten)
    assert restored_inputs(t, backend(t).members, KEPT_AT) == {}
    assert step_not_replayable(t, backend(t), kept=KEPT_AT) is not None
    made_again = LINES.replace('    1 2.6 +++', '    1 2.55 openat(AT_FDCWD</ws>, "/tmp/tmpq1/input.json", '
                               'O_WRONLY|O_CREAT, 0666) = 5</tmp/tmpq1/input.json>\n    1 2.6 +++')
    t = trace(made_again)
    assert restored_inputs(t, backend(t).members, KEPT_AT) == {}


def test_pips_hook_is_replayable_with_the_input_pip_removed():
    t = trace(PIP)  # pip is the build's root, a driver: its hook is the step
    kept = {"/tmp/tmpq1/input.json": ((1.99, "/k/input", 1.1),)}
    hook = t.steps[0]
    assert step_not_replayable(t, hook) == "read /tmp/tmpq1/input.json, which `python3 -m pip wheel .` removed afterwards"
    assert step_not_replayable(t, hook, kept=kept) is None
    assert restored_inputs(t, hook.members, kept) == {"/tmp/tmpq1/input.json": "/k/input"}


# gcc's shape: cc1 writes the assembly under /tmp, `as` reads it, the gcc driver removes it
GCC = """
    1 1.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1.1 clone(child_stack=NULL) = 2
    2 1.2 execve("/usr/bin/gcc", ["gcc", "-c", "t.c"], 0x1 /* 1 vars */) = 0
    2 1.3 clone(child_stack=NULL) = 3
    3 1.4 execve("/usr/lib/gcc/cc1", ["cc1", "t.c", "-o", "/tmp/ccAb12Cd.s"], 0x1 /* 1 vars */) = 0
    3 1.5 openat(AT_FDCWD</ws>, "t.c", O_RDONLY) = 3</ws/t.c>
    3 1.6 openat(AT_FDCWD</ws>, "/tmp/ccAb12Cd.s", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/ccAb12Cd.s>
    3 1.7 +++ exited with 0 +++
    2 1.8 clone(child_stack=NULL) = 4
    4 1.9 execve("/usr/bin/as", ["as", "-o", "t.o", "/tmp/ccAb12Cd.s"], 0x1 /* 1 vars */) = 0
    4 2.0 openat(AT_FDCWD</ws>, "/tmp/ccAb12Cd.s", O_RDONLY) = 3</tmp/ccAb12Cd.s>
    4 2.1 openat(AT_FDCWD</ws>, "t.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/t.o>
    4 2.2 +++ exited with 0 +++
    2 2.3 unlinkat(AT_FDCWD</ws>, "/tmp/ccAb12Cd.s", 0) = 0
    2 2.4 +++ exited with 0 +++
    1 2.5 +++ exited with 0 +++
"""


def test_what_a_process_of_the_same_step_wrote_is_never_put_back():
    # `as` alone, given cc1's kept assembly, would replay stable while cc1 embeds __DATE__
    t = trace(GCC)
    kept = {"/tmp/ccAb12Cd.s": ((2.25, "/k/asm", 1.6),)}
    assembler = next(p.index for p in t.processes if p.argv[0] == "as")
    assert restored_inputs(t, (assembler,), kept) == {}
    writer = writer_of(t, t.steps[0], ("t.o",), kept=kept)
    assert writer.is_step and writer.passed_over == ("`as -o t.o /tmp/ccAb12Cd.s` read /tmp/ccAb12Cd.s, which "
                                                     "`gcc -c t.c` removed afterwards",)


# autoreconf's shape: it makes its TMPDIR, every autoconf below it looks into it (autom4te
# makes its own scratch there), and it removes the directory at its end
AUTORECONF = """
    1 1.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    1 1.1 clone(child_stack=NULL) = 2
    2 1.2 execve("/usr/bin/autoreconf", ["autoreconf", "-fi"], 0x1 /* 1 vars */) = 0
    2 1.3 mkdir("/tmp/arNzpeXg", 0700) = 0
    2 1.4 clone(child_stack=NULL) = 3
    3 1.5 execve("/usr/bin/autoconf", ["autoconf", "--trace=AC_INIT", "configure.ac"], 0x1 /* 1 vars */) = 0
    3 1.55 newfstatat(AT_FDCWD</ws>, "/tmp/arNzpeXg", {st_mode=S_IFDIR|0700, st_size=4096, ...}, 0) = 0
    3 1.6 mkdir("/tmp/arNzpeXg/am4tXy", 0700) = 0
    3 1.65 openat(AT_FDCWD</ws>, "/tmp/arNzpeXg/am4tXy/traces.m4", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/arNzpeXg/am4tXy/traces.m4>
    3 1.7 openat(AT_FDCWD</ws>, "autom4te.cache/requests", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/autom4te.cache/requests>
    3 1.75 unlinkat(AT_FDCWD</ws>, "/tmp/arNzpeXg/am4tXy/traces.m4", 0) = 0
    3 1.8 +++ exited with 0 +++
    2 1.9 unlinkat(AT_FDCWD</ws>, "/tmp/arNzpeXg", AT_REMOVEDIR) = 0
    2 2.0 +++ exited with 0 +++
    1 2.1 +++ exited with 0 +++
"""


def test_a_temporary_directory_an_ancestor_made_and_removed_is_made_again_for_the_replay():
    t = trace(AUTORECONF)
    autoconf = next(p.index for p in t.processes if p.argv[0] == "autoconf")
    assert handed_down(t.processes, autoconf, [autoconf]) == ("/tmp/arNzpeXg",)
    writer = writer_of(t, t.steps[0], ("autom4te.cache/requests",))
    assert not writer.is_step and writer.process.argv[0] == "autoconf"


def test_a_replay_makes_the_handed_down_directory_and_removes_it_after(tmp_path):
    made = Path(tempfile.gettempdir()) / f"ar{os.getpid()}x"  # in the temporary directory, as autoreconf's is
    out = tmp_path / "tree" / "out"
    out.parent.mkdir()
    call = StepCall(argv=("sh", "-c", f"test -d {made} && echo ok > out"), cwd=".", env={"PATH": "/usr/bin:/bin", "TMPDIR": str(made)},
                    exit_code=0, restored=("out",), compared=("out",), created=("out",), made_dirs=(str(made),))
    with StepReplayer(_Guard(), tmp_path / "tree", call, (0,), tmp_path / "logs") as replayer:
        outcome = replayer.replay(times=1)
        assert not outcome.failed and out.read_text() == "ok\n"
    assert not made.exists() and not out.exists()  # as the traced build left them


@given(st.lists(st.tuples(st.floats(0.0, 4.0, allow_nan=False), st.floats(0.0, 4.0, allow_nan=False)), max_size=6))
def test_a_version_is_put_back_only_when_kept_between_the_last_read_and_the_removal_unmodified_since(times):
    t = trace(LINES)
    kept = {"/tmp/tmpq1/input.json": tuple(sorted((time, f"/k/{i}", modified) for i, (time, modified) in enumerate(times)))}
    back = restored_inputs(t, backend(t).members, kept)
    usable = [where for time, where, modified in kept["/tmp/tmpq1/input.json"]
              if 1.7 - CLOCK_SLACK_S <= time <= 2.3 + CLOCK_SLACK_S and modified <= 1.7]
    assert back == ({"/tmp/tmpq1/input.json": usable[0]} if usable else {})


def test_a_version_written_after_the_read_is_not_put_back():
    # the file was still open for writing when it was removed: the kept bytes are not the ones read
    t = trace(LINES)
    assert restored_inputs(t, backend(t).members, {"/tmp/tmpq1/input.json": ((2.21, "/k/grown", 1.8),)}) == {}


def test_kept_entries_are_named_as_the_trace_names_paths():
    names = PathNames(WS)
    kept = kept_of([(2.0, "/ws/gen/a.c", "d1", 1.5), (1.0, "/tmp/x/in.json", "d2", 0.5), (3.0, "/proc/1/x", "d3", 2.0)],
                   names.relative, lambda digest: f"/k/{digest}")
    assert kept == {"gen/a.c": ((2.0, "/k/d1", 1.5),), "/tmp/x/in.json": ((1.0, "/k/d2", 0.5),)}


@dataclass
class _Exit:
    exit_code: int | None


class _Guard:
    """Runs the replayed command for real, at once."""

    def start(self, argv, cwd, env, cpus, log_path):
        with open(log_path, "w") as log:
            self.code = subprocess.run(argv, cwd=cwd, env=env, stdout=log, stderr=log).returncode

    def wait(self, timeout):
        return _Exit(self.code)


def test_a_replay_puts_removed_inputs_back_only_where_it_may_and_leaves_nothing(tmp_path):
    tree, kept, outside, tmp = (tmp_path / d for d in ("tree", "kept", "outside", "tmp"))
    for d in (tree, kept, tmp, outside / "user"):
        d.mkdir(parents=True)
    (kept / "d").write_text("payload\n")
    (tree / "mine.txt").write_text("the user's\n")
    (outside / "user" / "theirs.json").write_text("the user's\n")
    back = {"gen/in.json": "in-tree, absent", "mine.txt": "there: never overwritten",
            str(outside / "gone" / "deep" / "in.json"): "parent gone", str(outside / "user" / "in.json"): "parent a user's",
            str(tmp / "in.json"): "in the build's TMPDIR"}
    reads = " ".join(f"cat {p} >> out.txt 2>/dev/null;" for p in back)
    call = StepCall(argv=("sh", "-c", f": > out.txt; {reads} true"), cwd=".", env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp)},
                    exit_code=0, restored=("out.txt",), compared=("out.txt",),
                    brought_back=tuple((p, str(kept / "d")) for p in back))
    with StepReplayer(_Guard(), tree, call, (0,), tmp_path / "logs") as replayer:
        outcome = replayer.replay(times=2)
        # put back: gen/in.json, the gone parent's, the TMPDIR's; mine.txt read as the user left it
        assert (tree / "out.txt").read_text() == "payload\nthe user's\npayload\npayload\n"
    assert outcome.stable
    assert (tree / "mine.txt").read_text() == "the user's\n" and not (outside / "user" / "in.json").exists()
    assert not (tree / "gen").exists() and not (outside / "gone").exists() and not (tmp / "in.json").exists()
