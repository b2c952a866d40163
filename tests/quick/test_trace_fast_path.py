"""The parser's fast path (one regex for flat calls and for execve) gives exactly what the
general splitter gives: records, and the processes tracked from them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.trace import parse
from fuzzer.trace.parse import EXEC_CALL, FLAT_CALL, parse_lines
from fuzzer.trace.processes import track_processes

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
