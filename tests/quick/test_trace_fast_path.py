"""The parser's fast path (one regex for flat calls and for execve) gives exactly what the
general splitter gives: records, and the processes tracked from them; and the tracker's
(each call text's effect read once) tracks what the records do."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.trace import parse
from fuzzer.trace.effects import pointer_blind
from fuzzer.trace.parse import EXEC_CALL, FLAT_CALL, calls, parse_lines
from fuzzer.trace.processes import ProcessTracker, track_calls, track_processes

ENV = '["PATH=/usr/bin:/bin", "HOME=/root", "A=x, y) = 3", "Q=\\"q\\"", "CUT=abc"...]'
# A build's lines of every shape the fast path takes or must hand on: unfinished and
# resumed calls, signals, execve with its environment, escaped paths, *at calls on
# AT_FDCWD and on dirfds, renames, failed opens, clone/vfork, exits and kills.
TRICKY = [
    '100 1.000001 execve("/usr/bin/make", ["make", "-j2"], ' + ENV + ") = 0",
    "100 1.000002 vfork( <unfinished ...>",
    '101 1.000003 execve("/bin/sh", ["sh", "-c", "cc -o \\"a b\\" x.c > out, 2"], ' + ENV + ") = 0",
    "100 1.000004 <... vfork resumed>) = 101",
    "100 1.000005 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=99} ---",
    '101 1.000006 openat(AT_FDCWD</w>, "sub dir/\\303\\251t\\303\\251.c", O_RDONLY|O_CLOEXEC) = 3</w/sub dir/\\303\\251t\\303\\251.c>',
    '101 1.000007 openat(AT_FDCWD</w>, "missing.h", O_RDONLY) = -1 ENOENT (No such file or directory)',
    '101 1.000008 openat(3</w/sub dir>, "x\\"q\\", y.o", O_WRONLY|O_CREAT|O_TRUNC, 0666 <unfinished ...>',
    '100 1.000009 newfstatat(AT_FDCWD</w>, "all", 0x7ffd0, 0) = -1 ENOENT (No such file or directory)',
    '101 1.000010 <... openat resumed>) = 4</w/sub dir/x"q", y.o>',
    '101 1.000011 newfstatat(1</w/out, 2>, "", {st_mode=S_IFREG|0644, st_size=0, ...}, AT_EMPTY_PATH) = 0',
    '101 1.000012 newfstatat(4</w/sub dir/x"q", y.o>, "",  <unfinished ...>',
    "101 1.000013 <... newfstatat resumed>0x7ffd21c81570, AT_EMPTY_PATH) = 0",
    '101 1.000014 renameat2(AT_FDCWD</w>, "t.tmp", 3</w/sub dir>, "t) = 1", RENAME_NOREPLACE) = 0',
    '101 1.000015 rename("a.tmp", "a") = -1 ENOENT (No such file or directory)',
    '101 1.000016 unlinkat(AT_FDCWD</w>, "gone", 0) = 0',
    '101 1.000017 mkdirat(AT_FDCWD</w>, "obj", 0777) = -1 EEXIST (File exists)',
    '101 1.000018 faccessat2(AT_FDCWD</w>, "cut"..., X_OK, AT_EACCESS) = 0',
    "101 1.000019 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, "
    "child_tidptr=0x7f00) = 102",
    '102 1.000020 chdir("sub dir") = 0',
    '102 1.000021 stat("x.c", 0x7ffe0) = 0',
    "102 1.000022 getdents64(3</w/sub dir>, 0x5600 /* 4 entries */, 32768) = 112",
    '102 1.000023 copy_file_range(3</w/a>, NULL, 4</w/b>, NULL, 9223372035781033984, 0) = 11',
    "102 1.000024 dup2(5<pipe:[100517]>, 0</dev/null>) = 0",
    "102 1.000025 exit_group(0) = ?",
    "102 1.000026 +++ exited with 0 +++",
    "101 1.000027 exit_group(1 <unfinished ...>",
    "101 1.000028 <... exit_group resumed>)   = ?",
    "101 1.000029 +++ killed by SIGKILL +++",
    '100 1.000030 openat(AT_FDCWD</w>, "cut',  # the last line, cut short
]


def general(monkeypatch):
    """parse_lines with every call text split by the general splitter."""
    monkeypatch.setattr(parse, "_call_parts", parse._split_call_parts)
    monkeypatch.setattr(parse, "_cached_call_parts", parse._split_call_parts)


def test_tricky_lines_give_the_records_and_processes_of_the_general_splitter(monkeypatch):
    lines = [line + "\n" for line in TRICKY]
    fast_records = list(parse_lines(lines))
    fast_processes = track_processes(fast_records, "/w")
    general(monkeypatch)
    assert fast_records == list(parse_lines(lines))
    assert fast_processes == track_processes(parse_lines(lines), "/w")
    assert len(fast_records) == 24 and len(fast_processes) == 3


def test_the_fast_path_takes_the_common_shapes():
    """Without this the equivalence above could hold because nothing took the fast path."""
    texts = [line.split("(", 1)[1] for line in TRICKY if "(" in line and ") = " in line and "resumed" not in line]
    flat = [t for t in texts if FLAT_CALL.fullmatch(t)]
    assert len(flat) >= 14
    assert sum(1 for t in texts if EXEC_CALL.fullmatch(t)) == 2
    (record,) = parse_lines([TRICKY[5]])
    assert record.args[1] == '"sub dir/\\303\\251t\\303\\251.c"' and record.result_path == "/w/sub dir/été.c"


ARGS = st.sampled_from(['"a,b"', '"x\\"y"', '"cut"...', '"p) = 3"', '""', "AT_FDCWD</w, x>", "3</w/a b>",
                        "-100<x>", "O_RDONLY|O_CLOEXEC", "0x7ffc", "0666", "-1", "NULL", "flags=SIGCHLD",
                        "[1, 2]", "{a=b}", "/* 2 */", '"', "<", "a b", ""])
RESULTS = st.sampled_from([") = 0", ") = -1 ENOENT (No such file or directory)", ") = 3</w/a, b>", ") = ?",
                           ")   = ?", ") = 0x1f", ") = 3</w/x) = 4>", ") = 5 EXTRA", ")", ") = 2\r"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(ARGS, max_size=8), st.sampled_from([", ", ",", " , "]), RESULTS)
def test_any_flat_call_text_parses_as_the_general_splitter_parses_it(args, separator, result):
    text = separator.join(args) + result
    assert parse._call_parts(text) == parse._split_call_parts(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['"a"', '"b, c"', '"d\\\\"', '"e"...', "...", "/* 3 vars */"]), max_size=5),
       RESULTS)
def test_any_execve_text_parses_as_the_general_splitter_parses_it(env, result):
    text = '"/bin/sh", ["sh", "-c"], [' + ", ".join(env) + "]" + result
    assert parse._call_parts(text) == parse._split_call_parts(text)


# Calls whose meaning depends on the process making them: relative paths against the cwd a
# chdir set (or none), AT_FDCWD that strace could not name, the same text in processes in
# other directories; and a thread, a child seen before its parent names it.
BY_PROCESS = [
    '101 1.000031 chdir("/w/sub dir") = 0',
    '101 1.000032 stat("x.c", 0x7ffe0) = 0',
    '102 1.000033 stat("x.c", 0x7ffe0) = -1 ENOENT (No such file or directory)',
    '101 1.000034 newfstatat(AT_FDCWD, "y.h", 0x7ffd0, 0) = 0',
    '102 1.000035 openat(AT_FDCWD, "y.h", O_RDONLY) = 3</w/y.h>',
    '101 1.000036 openat(AT_FDCWD</w/elsewhere>, "z.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4</w/elsewhere/z.o>',
    '101 1.000037 open("rel", O_RDONLY) = 5</w/elsewhere/rel>',
    "100 1.000038 clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_THREAD|CLONE_SIGHAND, tls=0x7f) = 103",
    '103 1.000039 openat(AT_FDCWD</w>, "t.txt", O_RDONLY) = 6</w/t.txt>',
    '104 1.000040 openat(AT_FDCWD</w>, "early", O_RDONLY) = 3</w/early>',
    "101 1.000041 vfork() = 104",
    '104 1.000042 creat("made", 0644) = 3</w/made>',
    '104 1.000043 truncate("/w/cut", 0) = 0',
    "104 1.000044 getdents64(3</w/sub dir>, 0x5600 /* 4 entries */, 32768) = 112",
    '104 1.000045 faccessat2(AT_FDCWD</w>, "gone", F_OK, 0) = -1 ENOENT (No such file or directory)',
    '104 1.000046 openat2(AT_FDCWD</w>, "o2", {flags=O_RDWR|O_CREAT, mode=0644}, 24) = 3</w/o2>',
    '104 1.000047 newfstatat(AT_FDCWD</w>, "all", 0x7ffe8, 0) = -1 ENOENT (No such file or directory)',
    '104 1.000048 newfstatat(AT_FDCWD</w/sub dir>, "all", 0x7ffe8, 0) = 0',
    '104 1.000049 newfstatat(AT_FDCWD, "all", 0x7ffe9, 0) = 0',
    '101 1.000049 newfstatat(AT_FDCWD</w>, "all", 0x7ffea, 0) = 0',
    '104 1.000050 newfstatat(AT_FDCWD</w>, "a", 0x1, "b") = 0',
    '104 1.000051 newfstatat(AT_FDCWD</w>, "a", 0x2, "b") = 0',
    "104 1.000052 +++ exited with 0 +++",
]


def test_calls_read_apart_from_their_process_track_the_processes_the_records_do():
    lines = [line + "\n" for line in TRICKY[:-1] + BY_PROCESS + TRICKY[-1:]]
    assert track_calls(calls(lines), "/w") == track_processes(parse_lines(lines), "/w")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TRICKY + BY_PROCESS), max_size=40), st.sampled_from(["100", "101", "105"]))
def test_any_lines_track_the_same_processes_either_way(lines, first_pid):
    """Any order and repetition of the shapes, the first line's pid deciding the root: every
    text the effect cache reads once must mean the same in each process that makes it."""
    lines = [first_pid + line[line.index(" "):] if i == 0 else line for i, line in enumerate(lines)]
    lines = [line + "\n" for line in lines]
    assert track_calls(calls(lines), "/w") == track_processes(parse_lines(lines), "/w")


def test_opens_probes_and_listings_are_read_once_for_every_process():
    """Without this the equivalence above could hold because every call went to a handler."""
    tracker = ProcessTracker("/w")
    lines = [line + "\n" for line in TRICKY + BY_PROCESS]
    tracker.feed_calls(calls(lines * 3))
    assert tracker._cached_call_effect.cache_info().hits >= 2 * 30
    read = [tracker._call_effect(item[2]) for item in calls(lines) if type(item) is tuple]
    once = [known[0] for known in read if known is not None and known[1] is not None]
    assert len(once) >= 15 and {"openat", "openat2", "newfstatat", "faccessat2", "getdents64", "truncate"} <= set(once)
    for line in BY_PROCESS[1:5]:  # relative to a cwd no annotation names: the process's own
        ((_, _, call),) = calls([line])
        assert tracker._call_effect(call)[1] is None


def test_an_fstat_reads_the_same_at_any_buffer_address():
    """The address differs in every process (ASLR); nothing else may be blinded."""
    assert pointer_blind("newfstatat", '3</w/a>, "", 0x7ffd0, AT_EMPTY_PATH) = 0') == pointer_blind(
        "newfstatat", '3</w/a>, "", 0x7ffe8, AT_EMPTY_PATH) = 0')
    assert pointer_blind("newfstatat", '3</w/a>, "", 0x7ffd0, AT_EMPTY_PATH) = 0') != pointer_blind(
        "newfstatat", '3</w/b>, "", 0x7ffd0, AT_EMPTY_PATH) = 0')
    for name, text in [("newfstatat", 'AT_FDCWD</w>, "a, 0x1, b") = 0'), ("newfstatat", 'AT_FDCWD</w>, "a", 0x1, "b") = 0'),
                       ("newfstatat", 'AT_FDCWD</w>, "a", {st_mode=S_IFREG}, 0) = 0'), ("statx", 'AT_FDCWD</w>, "a", 0x1, 0) = 0')]:
        assert pointer_blind(name, text) is None
