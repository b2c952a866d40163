"""Processes as they really ran: a fork that changes directory before it execs runs its
program there (Python's `cwd=`, `cd d && exec`, fchdir); CLONE_FS and CLONE_FILES share
the working directory and the fd table instead of copying them; a fork's dup of a file
onto fd 1 before its exec is where its program writes (`tar czf`, `gzip > x.tar.gz`)."""

from __future__ import annotations

import gzip

from test_trace_steps import accesses, processes, trace

from fuzzer.execute.step_replay import _failure
from fuzzer.trace.writers import writer_of

PYTHON = 'execve("/usr/bin/python3", ["python3", "configure.py"], 0x1 /* 1 vars */) = 0'


def test_a_child_given_cwd_runs_its_program_there():
    """subprocess.run(cwd="private"): vfork, chdir in the child, exec (the child's lines
    come before the parent names it, as strace writes them)."""
    t = trace(f"""
        1 1.0 {PYTHON}
        1 1.1 vfork( <unfinished ...>
        2 1.2 chdir("private") = 0
        2 1.3 execve("/usr/bin/cc", ["cc", "-c", "check.c"], 0x1 /* 1 vars */) = 0
        1 1.4 <... vfork resumed>) = 2
        2 1.5 openat(AT_FDCWD</ws/private>, "check.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/private/check.o>
        2 1.6 +++ exited with 0 +++
    """)
    configure, cc = t.processes
    (check,) = t.steps
    assert (configure.cwd, cc.cwd) == (".", "private")
    assert (check.cwd, check.key, check.outputs) == ("private", ("cc -c check.c", "private", 0), {"private/check.o"})


def test_a_program_run_outside_the_tree_is_shown_where_it_ran():
    """pip's build_wheel hook runs in /tmp/build-via-sdist-*: absolute, not "."."""
    _, hook = processes(f"""
        1 1.0 {PYTHON}
        1 1.1 vfork() = 2
        2 1.2 chdir("/tmp/build-via-sdist-k3j9/pkg-1.0") = 0
        2 1.3 execve("/usr/bin/python3", ["python3", "_in_process.py", "build_wheel"], 0x1 /* 1 vars */) = 0
    """)
    assert hook.cwd == "/tmp/build-via-sdist-k3j9/pkg-1.0"


def test_fchdir_before_exec():
    _, cc = processes(f"""
        1 1.0 {PYTHON}
        1 1.1 vfork() = 2
        2 1.2 fchdir(5</ws/build/meson-private>) = 0
        2 1.3 execve("/usr/bin/cc", ["cc", "sanitycheckc.c"], 0x1 /* 1 vars */) = 0
    """)
    assert cc.cwd == "build/meson-private"


def test_cd_then_exec_keeps_the_shell_where_it_started_and_its_program_writes_below():
    """`sh -c 'cd sub && exec cc ...'` in a child given cwd=: the process is shown and
    replayed as its first program, the shell, where that started; the cd is the shell's."""
    _, sh = processes(f"""
        1 1.0 {PYTHON}
        1 1.1 vfork() = 2
        2 1.2 chdir("private") = 0
        2 1.3 execve("/bin/sh", ["sh", "-c", "cd sub && exec cc -c x.c"], 0x1 /* 1 vars */) = 0
        2 1.4 chdir("sub") = 0
        2 1.5 execve("/usr/bin/cc", ["cc", "-c", "x.c"], 0x1 /* 1 vars */) = 0
        2 1.6 openat(AT_FDCWD, "x.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/private/sub/x.o>
    """)
    assert (sh.cwd, sh.execs[0][0], sh.argv[0]) == ("private", "sh", "cc")
    assert ("write", "private/sub/x.o", True) in accesses(sh)


def test_clone_fs_shares_the_cwd_and_vfork_does_not():
    parent, sharing, forked = processes("""
        1 1.0 execve("/usr/bin/runner", ["runner"], 0x1 /* 1 vars */) = 0
        1 1.1 clone(child_stack=0x7f00, flags=CLONE_FS|SIGCHLD) = 2
        2 1.2 chdir("/ws/sub") = 0
        2 1.25 execve("/usr/bin/helper", ["helper"], 0x1 /* 1 vars */) = 0
        1 1.3 unlink("a") = 0
        1 1.4 vfork() = 3
        3 1.5 chdir("/ws/other") = 0
        3 1.6 execve("/usr/bin/true", ["true"], 0x1 /* 1 vars */) = 0
        1 1.7 unlink("b") = 0
    """)
    assert {a.path for a in parent.accesses if a.kind == "delete"} == {"sub/a", "sub/b"}
    assert (sharing.cwd, forked.cwd) == ("sub", "other")


def test_a_threads_chdir_moves_its_process():
    (proc,) = processes("""
        1 1.0 execve("/usr/bin/runner", ["runner"], 0x1 /* 1 vars */) = 0
        1 1.1 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0}, 88) = 2
        2 1.2 chdir("/ws/sub") = 0
        1 1.3 unlink("a") = 0
    """)
    assert {a.path for a in proc.accesses if a.kind == "delete"} == {"sub/a"}


def test_clone_files_shares_what_fd_0_is():
    parent, child = processes("""
        1 1.0 execve("/usr/bin/runner", ["runner"], 0x1 /* 1 vars */) = 0
        1 1.1 clone(child_stack=0x7f00, flags=CLONE_FILES|SIGCHLD) = 2
        2 1.2 dup2(3<pipe:[7]>, 0) = 0<pipe:[7]>
    """)
    assert (parent.stdin_pipe, child.stdin_pipe) == (True, True)


TAR_CZF = """
    0 0.5 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    0 0.6 vfork() = 1
    1 1.0 execve("/usr/bin/tar", ["tar", "czf", "out.tar.gz", "dir"], 0x1 /* 1 vars */) = 0
    1 1.1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD) = 2
    2 1.2 dup(3<pipe:[11]>) = 0<pipe:[11]>
    2 1.3 creat("out.tar.gz", 0666) = 3</ws/out.tar.gz>
    2 1.4 dup(3</ws/out.tar.gz>) = 1</ws/out.tar.gz>
    2 1.5 execve("/bin/sh", ["/bin/sh", "-c", "gzip"], 0x1 /* 1 vars */) = 0
    2 1.6 vfork() = 3
    3 1.7 execve("/usr/bin/gzip", ["gzip"], 0x1 /* 1 vars */) = 0
    1 1.8 openat(AT_FDCWD</ws>, "dir/a", O_RDONLY) = 4</ws/dir/a>
"""


def test_tar_czf_gives_gzip_a_pipe_and_the_archive_by_plain_dups():
    """Replayed alone, `/bin/sh -c gzip` would compress an empty stdin into its log: the
    archive's writer is tar, which made the pipe and opened the file."""
    t = trace(TAR_CZF)
    _, tar, fork, gzip = t.processes
    assert (fork.stdin_pipe, gzip.stdin_pipe, tar.stdin_pipe) == (True, True, False)
    assert ("stdout", "out.tar.gz", True) in accesses(fork)
    (step,) = t.steps
    writer = writer_of(t, step, ("out.tar.gz",))
    assert (writer.process.index, writer.is_step) == (tar.index, True)
    assert step.leaf["out.tar.gz"] == ("gzip",)


def test_a_pipeline_into_gzip_through_the_shell():
    """`tar cf - dir | gzip > x.tar.gz`: the shell's fork for gzip takes the pipe as fd 0
    and the file it opened as fd 1 before it execs gzip."""
    t = trace("""
        0 0.5 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
        0 0.6 vfork() = 1
        1 1.0 execve("/bin/sh", ["/bin/sh", "-c", "tar cf - dir | gzip > x.tar.gz"], 0x1 /* 1 vars */) = 0
        1 1.1 clone(child_stack=NULL, flags=SIGCHLD) = 2
        2 1.2 dup2(4<pipe:[7]>, 1) = 1<pipe:[7]>
        2 1.3 execve("/usr/bin/tar", ["tar", "cf", "-", "dir"], 0x1 /* 1 vars */) = 0
        1 1.4 clone(child_stack=NULL, flags=SIGCHLD) = 3
        3 1.5 dup2(3<pipe:[7]>, 0) = 0<pipe:[7]>
        3 1.6 openat(AT_FDCWD</ws>, "x.tar.gz", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/x.tar.gz>
        3 1.7 dup2(3</ws/x.tar.gz>, 1) = 1</ws/x.tar.gz>
        3 1.8 execve("/usr/bin/gzip", ["gzip"], 0x1 /* 1 vars */) = 0
    """)
    _, sh, tar, gzip = t.processes
    assert (tar.stdin_pipe, gzip.stdin_pipe) == (False, True)
    assert ("stdout", "x.tar.gz", True) in accesses(gzip) and not any(a.kind == "stdout" for a in tar.accesses)
    (step,) = t.steps
    assert writer_of(t, step, ("x.tar.gz",)).process.index == sh.index


def test_f_dupfd_counts_and_other_fcntls_and_a_programs_own_dups_do_not():
    _, child = processes("""
        1 1.0 execve("/bin/sh", ["sh", "-c", "gen > out.txt"], 0x1 /* 1 vars */) = 0
        1 1.1 clone(child_stack=NULL, flags=SIGCHLD) = 2
        2 1.2 fcntl(3</ws/out.txt>, F_GETFD) = 1
        2 1.3 fcntl(3</ws/out.txt>, F_DUPFD, 1) = 1</ws/out.txt>
        2 1.4 execve("/usr/bin/gen", ["gen"], 0x1 /* 1 vars */) = 0
        2 1.5 fcntl(4</ws/log.txt>, F_DUPFD_CLOEXEC, 2) = 2</ws/log.txt>
        2 1.6 dup2(5</ws/own.txt>, 1) = 1</ws/own.txt>
    """)
    assert {a.path for a in child.accesses if a.kind == "stdout"} == {"out.txt"}


def test_a_writer_passed_over_says_it_ran_outside_the_tree():
    """A frontend runs its hook in a temporary copy and removes it: the hook cannot be
    replayed alone, and the report says where it ran, not only what it read."""
    t = trace("""
        0 0.5 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
        0 0.6 vfork() = 1
        1 1.0 execve("/usr/bin/python3", ["python3", "frontend.py"], 0x1 /* 1 vars */) = 0
        1 1.1 vfork() = 2
        2 1.2 chdir("/tmp/build-via-sdist-ab12/pkg") = 0
        2 1.3 execve("/usr/bin/python3", ["python3", "hook.py"], 0x1 /* 1 vars */) = 0
        2 1.4 openat(AT_FDCWD</tmp/build-via-sdist-ab12/pkg>, "hook.py", O_RDONLY) = 3</tmp/build-via-sdist-ab12/pkg/hook.py>
        2 1.5 openat(AT_FDCWD</tmp/build-via-sdist-ab12/pkg>, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/build-via-sdist-ab12/pkg/out.txt>
        2 1.6 +++ exited with 0 +++
        1 1.7 unlink("/tmp/build-via-sdist-ab12/pkg/hook.py") = 0
    """)
    (step,) = t.steps
    writer = writer_of(t, step, ("/tmp/build-via-sdist-ab12/pkg/out.txt",))
    assert writer.is_step
    assert writer.passed_over[0].startswith("`python3 hook.py` (in /tmp/build-via-sdist-ab12/pkg) ")


def test_a_replay_that_printed_bytes_is_not_quoted(tmp_path):
    """`sh -c gzip` replayed alone compressed nothing into its log: the evidence says so
    instead of quoting gzip's header bytes into the report."""
    log = tmp_path / "replay.log"
    log.write_bytes(gzip.compress(b"", mtime=0))
    assert _failure(0, log, idle=True).endswith(f": (binary output, {log.stat().st_size} bytes)")
    log.write_text("cc1: fatal error: x.c: No such file or directory\n")
    assert _failure(1, log).endswith(": cc1: fatal error: x.c: No such file or directory")
