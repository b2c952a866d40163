"""Trace analysis at scale: the fast paths give what the general ones give (the scale
benches' smoke runs are in tests/slow/test_trace_scale_benches.py)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.trace.parse import parse_lines, split_args, split_tokens
from fuzzer.trace.processes import track_processes

# One token per string, annotation, comment, run of plain text or single character: the
# splitter's general loop over these is the reference its runs and flat fast path must match.
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+"(?:\.\.\.)?|<[^<>]*+>|/\*.*?\*/|[^",<\[\]{}()/]++|.', re.DOTALL)


def split_token_by_token(text: str) -> tuple[str, ...] | None:
    return split_tokens(TOKEN.findall(text)) if text else ()


pieces = st.sampled_from(['"a,b"', '"x\\"y"', '"cut"...', "<", ">", "</p, q>", "/* 2, vars */", "/", "*", ",", ", ",
                          "[", "]", "{", "}", "(", ")", '"', "AT_FDCWD", "O_RDONLY|O_CLOEXEC", "0x7ffc", " ", "3"])


@settings(max_examples=500, deadline=None)
@given(st.lists(pieces, max_size=12).map("".join))
def test_split_args_agrees_with_the_token_by_token_splitter(text):
    assert split_args(text) == split_token_by_token(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='ab ,"<>[](){}/*\\.', max_size=30))
def test_split_args_agrees_on_arbitrary_punctuation(text):
    assert split_args(text) == split_token_by_token(text)


def test_a_repeated_call_text_keeps_each_lines_pid_and_time():
    """Texts are parsed once; the records still carry their own line's pid and time."""
    text = 'openat(AT_FDCWD</w>, "/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 3</usr/lib/libc.so.6>\n'
    first, second = parse_lines([f"10 1.000001 {text}", f"11 2.000002 {text}"])
    assert (first.pid, first.time, second.pid, second.time) == (10, 1.000001, 11, 2.000002)
    assert first.args == second.args and first.result_path == second.result_path == "/usr/lib/libc.so.6"


def test_a_process_frozen_at_exit_keeps_its_accesses_and_a_reused_pid_is_a_new_process():
    lines = [
        '1 1.0 clone(child_stack=NULL, flags=SIGCHLD) = 2\n',
        '2 1.1 openat(AT_FDCWD</w>, "a", O_RDONLY) = 3</w/a>\n',
        '2 1.2 openat(AT_FDCWD</w>, "a", O_RDONLY) = 3</w/a>\n',
        "2 1.3 +++ exited with 0 +++\n",
        '1 1.4 clone(child_stack=NULL, flags=SIGCHLD) = 2\n',
        '2 1.5 openat(AT_FDCWD</w>, "b", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</w/b>\n',
        "2 1.6 +++ exited with 1 +++\n",
        "1 1.7 +++ exited with 0 +++\n",
    ]
    make, first, second = track_processes(parse_lines(lines), "/w")
    assert [(a.kind, a.path, a.time, a.last) for a in first.accesses] == [("read", "a", 1.1, 1.2)]
    assert [(a.kind, a.path) for a in second.accesses] == [("write", "b")]
    assert (first.exit_code, second.exit_code, make.exit_code) == (0, 1, 0)
    assert first.parent == second.parent == make.index
