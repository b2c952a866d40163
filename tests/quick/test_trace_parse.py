"""The strace parser: generated lines round-trip, damaged lines are skipped."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.trace.parse import (
    Exit,
    Syscall,
    decode_array,
    decode_string,
    fd_path,
    parse_lines,
    parse_trace,
    split_args,
)

NAMED = {ord("\n"): "\\n", ord("\t"): "\\t", ord('"'): '\\"', ord("\\"): "\\\\"}


def escape(raw: bytes, annotation: bool = False) -> str:
    """strace's C escaping (`<`/`>` too inside fd annotations)."""
    out = []
    for i, byte in enumerate(raw):
        if byte in NAMED:
            out.append(NAMED[byte])
        elif 32 <= byte < 127 and not (annotation and chr(byte) in "<>"):
            out.append(chr(byte))
        elif i % 2:
            out.append(f"\\x{byte:02x}")
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def quoted(raw: bytes) -> str:
    return '"' + escape(raw) + '"'


names = st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\0" not in b)
tricky = st.sampled_from([b'a"b', b"back\\slash", b"new\nline", b"\xff\xfe", "ü".encode(), b"x) = 3", b"a,b", b"<>"])
paths = st.lists(st.one_of(names, tricky), min_size=1, max_size=4).map(lambda parts: b"/" + b"/".join(parts))


@st.composite
def calls(draw, pid: int) -> tuple[str, tuple[str, ...], str, Syscall]:
    """(name, args, result text, expected record) for one syscall of `pid`."""
    time = draw(st.integers(1_700_000_000_000_000, 1_800_000_000_000_000)) / 1e6
    path = draw(paths)
    cwd = draw(paths)
    kind = draw(st.sampled_from(["open-ok", "open-enoent", "execve", "exit_group", "vfork"]))
    if kind == "execve":
        argv = draw(st.lists(st.one_of(names, tricky), min_size=1, max_size=3))
        args = (quoted(path), "[" + ", ".join(quoted(a) for a in argv) + "]", "0x7ffc /* 3 vars */")
        return "execve", args, "0", Syscall(pid, time, "execve", args, 0, None, None)
    if kind == "exit_group":
        return "exit_group", ("0",), "?", Syscall(pid, time, "exit_group", ("0",), None, None, None)
    if kind == "vfork":
        return "vfork", (), "4242", Syscall(pid, time, "vfork", (), 4242, None, None)
    args = (f"AT_FDCWD<{escape(cwd, True)}>", quoted(path), "O_RDONLY|O_CLOEXEC")
    if kind == "open-ok":
        result = f"3<{escape(path, True)}>"
        return "openat", args, result, Syscall(pid, time, "openat", args, 3, None, os.fsdecode(path))
    result = "-1 ENOENT (No such file or directory)"
    return "openat", args, result, Syscall(pid, time, "openat", args, -1, "ENOENT", None)


def line(pid: int, time: float, text: str) -> str:
    return f"{pid:<5} {time:.6f} {text}\n"


@st.composite
def traces(draw) -> tuple[list[str], list[Syscall | Exit]]:
    """Lines of several pids interleaved, some calls split into unfinished/resumed pairs."""
    pids = draw(st.lists(st.integers(100, 99999), min_size=1, max_size=4, unique=True))
    todo = {pid: draw(st.lists(calls(pid), min_size=1, max_size=5)) for pid in pids}
    pending: dict[int, tuple[str, str, Syscall]] = {}
    lines, expected = [], []
    while todo or pending:
        pid = draw(st.sampled_from(sorted({*todo, *pending})))
        if pid in pending:
            name, rest, record = pending.pop(pid)
            lines.append(line(pid, record.time + 0.5, f"<... {name} resumed>{rest}"))
            expected.append(record)
            continue
        name, args, result, record = todo[pid].pop(0)
        if not todo[pid]:
            del todo[pid]
        split = draw(st.none() | st.integers(0, len(args)))
        if split is None:
            lines.append(line(pid, record.time, f"{name}({', '.join(args)}) = {result}"))
            expected.append(record)
        else:
            head = ", ".join(args[:split]) + (", " if 0 < split < len(args) else "")
            tail = ", ".join(args[split:])
            lines.append(line(pid, record.time, f"{name}({head} <unfinished ...>"))
            pending[pid] = (name, f"{tail}) = {result}", record)
    return lines, expected


@settings(max_examples=60, deadline=None)
@given(traces())
def test_interleaved_lines_round_trip(trace):
    lines, expected = trace
    records = list(parse_lines(text.encode("latin-1") for text in lines))
    assert records == expected


@settings(max_examples=150, deadline=None)
@given(paths, paths)
def test_paths_decode_to_the_original_file_names(path, cwd):
    text = line(7, 1.5, f"openat(AT_FDCWD<{escape(cwd, True)}>, {quoted(path)}, O_RDONLY) = 3<{escape(path, True)}>")
    (record,) = parse_lines([text.encode()])
    assert decode_string(record.args[1]) == os.fsdecode(path)
    assert fd_path(record.args[0]) == os.fsdecode(cwd)
    assert record.result_path == os.fsdecode(path)


@settings(max_examples=100, deadline=None)
@given(calls(7), st.data())
def test_lines_cut_inside_their_arguments_are_skipped(call, data):
    name, args, result, record = call
    call_text = f"{name}({', '.join(args)})"
    text = line(7, record.time, f"{call_text} = {result}")
    # the call's own closing parenthesis; a path in the result may hold ") = " as well
    end = text.index(call_text) + len(call_text) - 1
    cut = data.draw(st.integers(0, end - 1))
    assert list(parse_lines([text[:cut].encode("latin-1")])) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=200)))
def test_arbitrary_bytes_never_crash(raw_lines):
    for record in parse_lines(raw_lines):
        assert isinstance(record, (Syscall, Exit))


def test_exit_records():
    lines = [
        b"12 1.000001 +++ exited with 3 +++\n",
        b"13 1.000002 +++ killed by SIGSEGV (core dumped) +++\n",
        b"14 1.000003 +++ superseded by execve in pid 12 +++\n",
        b"15 1.000004 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---\n",
    ]
    assert list(parse_lines(lines)) == [Exit(12, 1.000001, 3, None), Exit(13, 1.000002, None, "SIGSEGV")]


def test_resumed_without_its_start_is_skipped_and_exit_drops_pending():
    lines = [
        b"12 1.0 <... openat resumed>) = 3</x>\n",
        b'13 1.1 openat(AT_FDCWD</w>, "a", O_RDONLY <unfinished ...>\n',
        b"13 1.2 +++ killed by SIGKILL +++\n",
        b"13 1.3 <... openat resumed>) = 3</w/a>\n",
    ]
    assert list(parse_lines(lines)) == [Exit(13, 1.2, None, "SIGKILL")]


def test_real_strace_shapes():
    text = (
        "7 1.5 clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f, stack_size=0x9000}"
        " => {parent_tid=[0]}, 88) = 4242\n"
        "7 1.6 wait4(-1,  <unfinished ...>\n"
        "7 1.7 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 4242\n"
        '7 1.8 newfstatat(1</tmp/out\\76x>, "", {st_mode=S_IFREG|0644, st_size=0, ...}, AT_EMPTY_PATH) = 0\n'
        '7 1.9 readlink("/a"..., 0x7ff, 4096) = -1 EINVAL (Invalid argument)\n'
    )
    clone, wait, stat, link = parse_lines(text.splitlines(keepends=True))
    assert clone.result == 4242 and "CLONE_VFORK" in clone.args[0] and clone.args[1] == "88"
    assert wait.args == ("-1", "[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]", "0", "NULL")
    assert fd_path(stat.args[0]) == "/tmp/out>x" and stat.args[1] == '""'
    assert (link.errno, link.args[0]) == ("EINVAL", '"/a"...')


def test_split_args_keeps_strings_brackets_and_comments_whole():
    assert split_args('"a,b", ["c", "d,e"], 0x1 /* 2, vars */') == ('"a,b"', '["c", "d,e"]', "0x1 /* 2, vars */")
    assert split_args('"unterminated, x') is None
    assert decode_array('["sh", "-c", "echo \\"hi\\" > x"]') == ["sh", "-c", 'echo "hi" > x']


def test_parse_trace_streams_a_file(tmp_path):
    trace = tmp_path / "t"
    trace.write_bytes(b'5 2.0 chdir("/w") = 0\n5 2.1 exit_group(0) = ?\n5 2.2 +++ exited with 0 +++\n')
    assert [type(r).__name__ for r in parse_trace(trace)] == ["Syscall", "Syscall", "Exit"]


def test_a_line_cut_inside_an_fd_annotation_is_skipped():
    """Cut after `3` of a path holding `) = 3`: the rest looks like a finished call."""
    cut = line(7, 1.5, "openat(AT_FDCWD</a/x) = 3").rstrip("\n")
    assert list(parse_lines([cut])) == []
    assert split_args("AT_FDCWD</a/x") is None
