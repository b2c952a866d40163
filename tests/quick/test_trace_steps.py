"""Process tree, file accesses and steps: synthetic traces, then a real traced make build."""

from __future__ import annotations

import textwrap

import pytest

from fuzzer.trace.parse import parse_lines
from fuzzer.trace.processes import track_processes
from fuzzer.trace.steps import build_trace, command_of, match_steps, written_by_drivers


WS = "/ws"


def processes(text: str, workspace: str = WS):
    lines = textwrap.dedent(text).strip().splitlines(keepends=True)
    return track_processes(parse_lines(lines), workspace)


def trace(text: str, workspace: str = WS):
    return build_trace(processes(text, workspace), workspace)


def accesses(proc) -> set[tuple]:
    return {(a.kind, a.path, a.found) for a in proc.accesses}


# --- processes ------------------------------------------------------------------------


def test_child_seen_before_its_parent_names_it_inherits_cwd():
    procs = processes("""
        10 1.0 execve("/bin/sh", ["sh", "-c", "x"], 0x1 /* 1 vars */) = 0
        10 1.1 chdir("sub") = 0
        10 1.2 vfork( <unfinished ...>
        11 1.3 execve("/usr/bin/test", ["test", "-f", "gen.h"], 0x1 /* 1 vars */) = 0
        11 1.4 access("gen.h", F_OK) = -1 ENOENT (No such file or directory)
        10 1.5 <... vfork resumed>) = 11
        11 1.6 +++ exited with 1 +++
        10 1.7 +++ exited with 0 +++
    """)
    sh, test = procs
    assert (test.parent, test.cwd, test.exit_code, test.start) == (sh.index, "sub", 1, 1.2)
    assert ("probe", "sub/gen.h", False) in accesses(test)
    assert test.argv == ("test", "-f", "gen.h") and sh.cwd == "."


def test_paths_are_resolved_classified_and_filtered():
    (proc,) = processes("""
        5 1.0 openat(AT_FDCWD</ws/d>, "../a/./b.c", O_RDONLY) = 3</ws/a/b.c>
        5 1.1 openat(4</ws/out>, "x.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/out/x.o>
        5 1.2 openat(AT_FDCWD</ws>, "lib.a", O_RDWR) = 3</ws/lib.a>
        5 1.3 openat(AT_FDCWD</ws>, "/usr/include/stdio.h", O_RDONLY) = 3</usr/include/stdio.h>
        5 1.4 openat(AT_FDCWD</ws>, "/proc/self/maps", O_RDONLY) = 3</proc/self/maps>
        5 1.5 newfstatat(AT_FDCWD</ws>, "cfg.h", 0x7ff, 0) = -1 ENOENT (No such file or directory)
        5 1.6 newfstatat(3</ws/lib.a>, "", {st_mode=S_IFREG|0644, st_size=0, ...}, AT_EMPTY_PATH) = 0
        5 1.7 mkdir("out", 0777) = -1 EEXIST (File exists)
        5 1.8 mkdirat(AT_FDCWD</ws>, "new", 0777) = 0
        5 1.9 openat(AT_FDCWD</ws>, "src", O_RDONLY|O_DIRECTORY) = 3</ws/src>
        5 2.0 getdents64(3</ws/src>, 0x55 /* 4 entries */, 32768) = 112
        5 2.1 renameat2(AT_FDCWD</ws>, "t.tmp", AT_FDCWD</ws>, "t", RENAME_NOREPLACE) = 0
        5 2.2 unlinkat(AT_FDCWD</ws>, "gone", 0) = 0
        5 2.3 symlinkat("target", AT_FDCWD</ws>, "link") = 0
        5 2.4 openat(AT_FDCWD</ws>, "trunc"..., O_RDONLY) = 3</ws/truncated-name>
        5 2.5 exit_group(2) = ?
    """)
    assert accesses(proc) == {
        ("read", "a/b.c", True),
        ("write", "out/x.o", True),
        ("read", "lib.a", True),
        ("write", "lib.a", True),
        ("read", "/usr/include/stdio.h", True),
        ("probe", "cfg.h", False),
        ("probe", "out", True),
        ("mkdir", "new", True),
        ("probe", "src", True),
        ("list", "src", True),
        ("delete", "t.tmp", True),
        ("write", "t", True),
        ("delete", "gone", True),
        ("write", "link", True),
    }
    assert next(a for a in proc.accesses if a.path == "t").origin == "t.tmp"
    assert proc.exit_code == 2  # no `+++ exited` line: exit_group's argument


def test_fchdir_and_relative_chdir_move_the_cwd():
    (proc,) = processes("""
        5 1.0 chdir("/ws/a") = 0
        5 1.1 chdir("../b") = 0
        5 1.2 unlink("x") = 0
        5 1.3 fchdir(3</ws/c>) = 0
        5 1.4 rmdir("y") = 0
    """)
    assert {a.path for a in proc.accesses} == {"b/x", "c/y"}


def test_thread_children_belong_to_the_process_and_pids_can_be_reused():
    procs = processes("""
        1 1.0 execve("/usr/bin/scons", ["scons", "-j2"], 0x1 /* 1 vars */) = 0
        1 1.1 clone3({flags=CLONE_VM|CLONE_FS|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0} => {parent_tid=[2]}, 88) = 2
        2 1.2 vfork() = 3
        3 1.3 execve("/bin/sh", ["sh", "-c", "cc a.c"], 0x1 /* 1 vars */) = 0
        3 1.4 +++ killed by SIGSEGV +++
        2 1.5 vfork() = 3
        3 1.6 execve("/bin/sh", ["sh", "-c", "cc b.c"], 0x1 /* 1 vars */) = 0
        3 1.7 +++ exited with 0 +++
        2 1.8 +++ exited with 0 +++
        1 1.9 +++ exited with 0 +++
    """)
    assert [(p.pid, p.parent, p.ppid, p.argv[-1]) for p in procs] == [
        (1, None, None, "-j2"),
        (3, 0, 1, "cc a.c"),
        (3, 0, 1, "cc b.c"),
    ]
    assert (procs[1].signal, procs[1].failed, procs[2].exit_code) == ("SIGSEGV", True, 0)
    assert procs[0].exit_code == 0


def test_workspace_reached_through_a_symlink(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    (proc,) = processes(f'5 1.0 openat(AT_FDCWD<{real}>, "x", O_RDONLY) = 3<{real}/x>', str(tmp_path / "link"))
    assert accesses(proc) == {("read", "x", True)}


# --- steps ----------------------------------------------------------------------------

NESTED = """
    1 1.0 execve("/bin/sh", ["sh", "-c", "make -j2"], 0x1 /* 1 vars */) = 0
    1 1.1 vfork() = 2
    2 1.2 execve("/usr/bin/make", ["make", "-j2"], 0x1 /* 1 vars */) = 0
    2 1.3 newfstatat(AT_FDCWD</ws>, "prog", 0x7ff, 0) = -1 ENOENT (No such file or directory)
    2 1.4 vfork() = 3
    3 1.5 execve("/bin/sh", ["/bin/sh", "-c", "cd lib && make"], 0x1 /* 1 vars */) = 0
    3 1.6 chdir("lib") = 0
    3 1.7 vfork() = 4
    4 1.8 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
    4 1.9 vfork() = 5
    5 2.0 execve("/bin/sh", ["/bin/sh", "-c", "cc -c x.c > x.log"], 0x1 /* 1 vars */) = 0
    5 2.1 openat(AT_FDCWD</ws/lib>, "x.log", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/lib/x.log>
    5 2.2 vfork() = 6
    6 2.3 execve("/usr/bin/cc", ["cc", "-c", "x.c"], 0x1 /* 1 vars */) = 0
    6 2.4 newfstatat(1</ws/lib/x.log>, "", {st_mode=S_IFREG|0644, st_size=0, ...}, AT_EMPTY_PATH) = 0
    6 2.5 openat(AT_FDCWD</ws/lib>, "x.c", O_RDONLY) = 3</ws/lib/x.c>
    6 2.6 openat(AT_FDCWD</ws/lib>, "x.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/lib/x.o>
    6 2.7 openat(AT_FDCWD</ws/lib>, "x.o", O_RDONLY) = 3</ws/lib/x.o>
    6 2.8 +++ exited with 0 +++
    5 2.9 +++ exited with 0 +++
    4 3.0 +++ exited with 0 +++
    3 3.1 +++ exited with 0 +++
    2 3.2 vfork() = 7
    7 3.3 execve("/usr/bin/cmake", ["cmake", "--build", "b"], 0x1 /* 1 vars */) = 0
    7 3.4 vfork() = 8
    8 3.5 execve("/usr/bin/ninja", ["ninja"], 0x1 /* 1 vars */) = 0
    8 3.6 vfork() = 9
    9 3.7 execve("/bin/sh", ["/bin/sh", "-c", "cc -c x.c"], 0x1 /* 1 vars */) = 0
    9 3.8 +++ exited with 1 +++
    8 3.9 vfork() = 10
    10 4.0 execve("/bin/sh", ["/bin/sh", "-c", "cc -c x.c"], 0x1 /* 1 vars */) = 0
    10 4.1 +++ exited with 0 +++
    8 4.2 +++ exited with 1 +++
    7 4.3 +++ exited with 1 +++
    2 4.4 +++ exited with 2 +++
    1 4.5 +++ exited with 2 +++
"""


def test_nested_drivers_own_no_step_and_their_children_are_steps():
    t = trace(NESTED)
    assert [(s.command, s.cwd, s.occurrence, s.outer) for s in t.steps] == [
        ("cd lib && make", ".", 0, None),
        ("cc -c x.c > x.log", "lib", 0, 0),
        ("cc -c x.c", ".", 0, None),
        ("cc -c x.c", ".", 1, None),
    ]
    wrapper, compile_, first, second = t.steps
    assert wrapper.writes == {} and wrapper.end == 3.1
    assert compile_.writes.keys() == {"lib/x.log", "lib/x.o"}
    assert compile_.leaf["lib/x.log"] == ("cc", "-c", "x.c")  # the shell only opened the redirect
    assert compile_.inputs == {"lib/x.c", "/bin/sh", "/usr/bin/cc"}  # x.o was read back: its own output
    assert compile_.read_order == ("/bin/sh", "/usr/bin/cc", "lib/x.c", "lib/x.o")
    assert (first.exit_code, first.failed, second.failed) == (1, True, False)
    assert t.writers("lib/x.o") == (compile_,)
    assert t.step(("cc -c x.c", ".", 1)) is second
    assert [(a.id, b.id) for a, b in match_steps(t, t)] == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_a_redirect_filled_by_a_program_that_never_fstats_stdout():
    t = trace("""
        1 1.0 execve("/usr/bin/make", ["make"], 0x1 /* 1 vars */) = 0
        1 1.1 vfork() = 2
        2 1.2 execve("/bin/sh", ["/bin/sh", "-c", "echo x > a; sh gen.sh > b"], 0x1 /* 1 vars */) = 0
        2 1.3 openat(AT_FDCWD</ws>, "a", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/a>
        2 1.4 openat(AT_FDCWD</ws>, "b", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/b>
        2 1.5 vfork() = 3
        3 1.6 execve("/bin/sh", ["sh", "gen.sh"], 0x1 /* 1 vars */) = 0
    """)
    (step,) = t.steps
    assert step.leaf == {"a": ("/bin/sh", "-c", "echo x > a; sh gen.sh > b"), "b": ("sh", "gen.sh")}


@pytest.mark.parametrize(
    "argv, command",
    [
        (["/bin/sh", "-c", "cc -o 'a b' x.c"], "cc -o 'a b' x.c"),
        (["/bin/bash", "-e", "-o", "pipefail", "-c", "a | b"], "a | b"),
        (["sh", "-ec", "gen"], "gen"),
        (["sh", "build.sh"], "sh build.sh"),
        (["cp", "a b", "c"], "cp 'a b' c"),
    ],
)
def test_command_of(argv, command):
    assert command_of(argv) == command


# --- copies, piped stdin, the network (what writer processes rest on) ---------------------


def test_copies_are_writes_whose_bytes_come_from_their_source():
    procs = processes("""
        5 1.0 execve("/usr/bin/python3", ["python3", "-m", "pip"], 0x1 /* 1 vars */) = 0
        5 1.1 openat(AT_FDCWD</ws>, "dist/x.whl", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 4</ws/dist/x.whl>
        5 1.2 sendfile(4</ws/dist/x.whl>, 3</tmp/pip-wheel-ab/x.whl>, 0x7ff, 8388608) = 6
        5 1.25 openat(AT_FDCWD</ws>, "b", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4</ws/b>
        5 1.3 copy_file_range(3</ws/a>, NULL, 4</ws/b>, NULL, 9223372035781033984, 0) = 6
        5 1.35 openat(AT_FDCWD</ws>, "c", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4</ws/c>
        5 1.4 copy_file_range(3<pipe:[1]>, NULL, 4</ws/c>, NULL, 10, 0) = 6
    """)
    (pip,) = procs
    by = {(a.kind, a.path): a for a in pip.accesses}
    assert by[("write", "dist/x.whl")].origin == "/tmp/pip-wheel-ab/x.whl"
    assert ("read", "/tmp/pip-wheel-ab/x.whl") in by
    assert by[("write", "b")].origin == "a" and ("read", "a") in by
    assert by[("write", "c")].origin is None  # a pipe carries no file's bytes


def test_a_copy_into_an_inherited_descriptor_is_a_part_of_what_its_opener_writes():
    # `(cat stable.txt; echo cpus=$(nproc)) > out`: GNU cat copies into the subshell's fd 1
    sh, cat = processes("""
        5 1.0 execve("/bin/sh", ["sh", "-c", "(cat stable.txt; echo cpus=2) > out"], 0x1 /* 1 vars */) = 0
        5 1.1 openat(AT_FDCWD</ws>, "out", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/out>
        5 1.2 clone(child_stack=NULL, flags=SIGCHLD) = 6
        6 1.3 execve("/bin/cat", ["cat", "stable.txt"], 0x1 /* 1 vars */) = 0
        6 1.4 openat(AT_FDCWD</ws>, "stable.txt", O_RDONLY) = 3</ws/stable.txt>
        6 1.5 copy_file_range(3</ws/stable.txt>, NULL, 1</ws/out>, NULL, 9223372035781033984, 0) = 7
    """)
    assert "out" not in {a.path for a in cat.accesses} and ("read", "stable.txt") in {(a.kind, a.path) for a in cat.accesses}
    assert {(a.kind, a.path, a.origin) for a in sh.accesses} >= {("write", "out", None)}


def test_a_stdin_pipe_is_recorded_inherited_and_undone_by_a_redirect():
    sh, sort, child, cat = processes("""
        1 1.0 execve("/bin/sh", ["sh", "-c", "gen | sort > out; cat < in"], 0x1 /* 1 vars */) = 0
        1 1.1 clone(child_stack=NULL) = 2
        2 1.2 dup2(3<pipe:[7]>, 0</dev/null>) = 0<pipe:[7]>
        2 1.3 execve("/usr/bin/sort", ["sort"], 0x1 /* 1 vars */) = 0
        2 1.4 clone(child_stack=NULL) = 3
        3 1.5 execve("/usr/bin/true", ["true"], 0x1 /* 1 vars */) = 0
        1 1.6 clone(child_stack=NULL) = 4
        4 1.7 dup2(3</ws/in>, 0</dev/null>) = 0</ws/in>
        4 1.8 execve("/bin/cat", ["cat"], 0x1 /* 1 vars */) = 0
    """)
    assert (sh.stdin_pipe, sort.stdin_pipe, child.stdin_pipe, cat.stdin_pipe) == (False, True, True, False)


def test_only_internet_connections_count_as_the_network():
    local, online = processes("""
        1 1.0 execve("/usr/bin/id", ["id"], 0x1 /* 1 vars */) = 0
        1 1.1 connect(3<socket:[1]>, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
        1 1.2 clone(child_stack=NULL) = 2
        2 1.3 execve("/usr/bin/curl", ["curl", "x"], 0x1 /* 1 vars */) = 0
        2 1.4 connect(3<socket:[2]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)
    """)
    assert local.network is None
    assert online.network == 'sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.0.0.1")'


def test_steps_list_their_processes_root_first():
    t = trace(NESTED)
    assert [t.processes[i].argv[0] for i in t.steps[1].members][:1] == ["/bin/sh"]
    assert all(t.processes[i].pid in t.steps[1].pids for i in t.steps[1].members)


def test_meson_setup_is_a_step_that_writes_its_files_and_meson_compile_a_driver():
    """`meson setup` writes its bookkeeping itself: as a driver it was no step, and its files
    were "written by no traced step"; `meson compile` only runs ninja, whose children are steps."""
    t = trace("""
        1 1.0 execve("/bin/sh", ["sh", "-c", "meson setup build && meson compile -C build"], 0x1 /* 1 vars */) = 0
        1 1.1 vfork( <unfinished ...>
        2 1.2 execve("/usr/bin/meson", ["meson", "setup", "build"], 0x1 /* 1 vars */) = 0
        2 1.3 openat(AT_FDCWD</ws>, "build/meson-private/coredata.dat", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/build/meson-private/coredata.dat>
        2 1.4 vfork( <unfinished ...>
        3 1.5 execve("/usr/bin/cc", ["cc", "sanitycheckc.c"], 0x1 /* 1 vars */) = 0
        3 1.6 openat(AT_FDCWD</ws>, "build/meson-private/sanitycheckc.exe", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/build/meson-private/sanitycheckc.exe>
        3 1.7 +++ exited with 0 +++
        2 1.8 <... vfork resumed>) = 3
        2 1.9 +++ exited with 0 +++
        1 2.0 <... vfork resumed>) = 2
        1 2.1 vfork( <unfinished ...>
        4 2.2 execve("/usr/bin/meson", ["meson", "compile", "-C", "build"], 0x1 /* 1 vars */) = 0
        4 2.3 vfork( <unfinished ...>
        5 2.4 execve("/usr/bin/ninja", ["ninja"], 0x1 /* 1 vars */) = 0
        5 2.5 vfork( <unfinished ...>
        6 2.6 execve("/usr/bin/cc", ["cc", "-c", "ops.c"], 0x1 /* 1 vars */) = 0
        6 2.7 openat(AT_FDCWD</ws>, "build/ops.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/build/ops.o>
        6 2.8 +++ exited with 0 +++
        5 2.9 <... vfork resumed>) = 6
        5 3.0 +++ exited with 0 +++
        4 3.1 <... vfork resumed>) = 5
        4 3.2 +++ exited with 0 +++
        1 3.3 <... vfork resumed>) = 4
        1 3.4 +++ exited with 0 +++
    """)
    assert [s.argv for s in t.steps] == [("meson", "setup", "build"), ("cc", "-c", "ops.c")]
    setup, compile_ = t.steps
    assert {"build/meson-private/coredata.dat", "build/meson-private/sanitycheckc.exe"} <= set(setup.writes)
    assert [s.argv for s in t.writers("build/meson-private/coredata.dat")] == [("meson", "setup", "build")]
    assert set(compile_.writes) == {"build/ops.o"}


def test_files_a_driver_wrote_itself_are_named_with_the_driver():
    t = trace("""
        1 1.0 execve("/usr/bin/ninja", ["ninja"], 0x1 /* 1 vars */) = 0
        1 1.1 vfork( <unfinished ...>
        2 1.2 execve("/usr/bin/cc", ["cc", "-c", "ops.c"], 0x1 /* 1 vars */) = 0
        2 1.3 openat(AT_FDCWD</ws>, "ops.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/ops.o>
        2 1.4 +++ exited with 0 +++
        1 1.5 <... vfork resumed>) = 2
        1 1.6 openat(AT_FDCWD</ws>, ".ninja_log", O_WRONLY|O_CREAT|O_APPEND, 0666) = 3</ws/.ninja_log>
        1 1.7 +++ exited with 0 +++
    """)
    assert written_by_drivers(t, [".ninja_log", "ops.o", "absent"]) == {".ninja_log": "ninja"}


@pytest.mark.parametrize("dune", [
    '2 1.2 execve("/usr/bin/dune", ["dune", "build"], 0x1 /* 1 vars */) = 0',
    # a wrapper by dune's name that execs the program (a shim, a stand-in script)
    '2 1.2 execve("./tools/dune", ["./tools/dune", "build"], 0x1 /* 1 vars */) = 0\n'
    '        2 1.25 execve("/usr/bin/python3", ["python3", "tools/driver.py", "build"], 0x1 /* 1 vars */) = 0',
])
def test_dune_under_make_is_a_driver_whose_compiles_are_steps(dune):
    """An opam package's Makefile runs dune, which runs every compile itself: as one step
    of make, two compiles racing on an interface were one step, with no hazard."""
    t = trace(f"""
        1 1.0 execve("/bin/sh", ["sh", "-c", "dune build"], 0x1 /* 1 vars */) = 0
        1 1.1 vfork( <unfinished ...>
        {dune}
        2 1.3 vfork( <unfinished ...>
        3 1.4 execve("/usr/bin/ocamlc", ["ocamlc", "-c", "lexer.ml"], 0x1 /* 1 vars */) = 0
        3 1.5 openat(AT_FDCWD</ws>, "lexer.cmi", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</ws/lexer.cmi>
        3 1.6 +++ exited with 0 +++
        2 1.7 <... vfork resumed>) = 3
        2 1.8 vfork( <unfinished ...>
        4 1.9 execve("/usr/bin/ocamlc", ["ocamlc", "-c", "parser.ml"], 0x1 /* 1 vars */) = 0
        4 2.0 +++ exited with 0 +++
        2 2.1 <... vfork resumed>) = 4
        2 2.2 +++ exited with 0 +++
        1 2.3 <... vfork resumed>) = 2
        1 2.4 +++ exited with 0 +++
    """)
    assert [s.argv for s in t.steps] == [("ocamlc", "-c", "lexer.ml"), ("ocamlc", "-c", "parser.ml")]
