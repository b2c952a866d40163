"""GNU make's parallel jobs are replayable: make gives every job but one a pipe whose
writing end it closed as stdin (in the job's fork, before its exec), which reads as empty,
as a replay's /dev/null does. A pipe a shell's pipeline feeds still makes a process not
replayable alone."""

from __future__ import annotations

from test_trace_steps import processes


def test_a_job_given_makes_closed_pipe_is_no_piped_stdin():
    make, job, gen, sort = processes("""
        1 1.0 execve("/usr/bin/make", ["make", "-j3"], 0x1 /* 1 vars */) = 0
        1 1.1 clone(child_stack=NULL) = 2
        2 1.2 dup2(5<pipe:[9]>, 0</dev/null>) = 0<pipe:[9]>
        2 1.3 execve("/bin/sh", ["/bin/sh", "-c", "gen | sort > out"], 0x1 /* 1 vars */) = 0
        2 1.4 clone(child_stack=NULL) = 3
        3 1.5 execve("/usr/bin/gen", ["gen"], 0x1 /* 1 vars */) = 0
        2 1.6 clone(child_stack=NULL) = 4
        4 1.7 dup2(3<pipe:[7]>, 0<pipe:[9]>) = 0<pipe:[7]>
        4 1.8 execve("/usr/bin/sort", ["sort"], 0x1 /* 1 vars */) = 0
    """)
    assert (make.stdin_pipe, job.stdin_pipe, gen.stdin_pipe, sort.stdin_pipe) == (False, False, False, True)
