"""A big trace's calls read in a child process are the ones read here, and the child is
always ended."""

from __future__ import annotations

import psutil
import pytest

from fuzzer.trace import joiner
from fuzzer.trace.parse import trace_calls

LINES = [
    '10 1.000001 execve("/usr/bin/make", ["make", "-j2"], 0x7ffc /* 3 vars */) = 0\n',
    '10 1.000010 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>\n',
    '11 1.000011 openat(AT_FDCWD</w>, "caf\xe9.h", O_RDONLY) = 3</w/caf\xe9.h>\n',
    '10 1.000012 <... clone resumed>) = 11\n',
    '11 1.000013 newfstatat(AT_FDCWD</w>, "gen.h",  <unfinished ...>\n',
    '12 1.000014 read(3, "x"..., 4) = 4\n',
    '11 1.000015 <... newfstatat resumed>0x7ffd, 0) = -1 ENOENT (No such file or directory)\n',
    '11 1.000016 write(1, "half a line\n',  # damaged: skipped alike
    '11 1.000017 +++ exited with 2 +++\n',
    '12 1.000018 +++ killed by SIGKILL +++\n',
    '10 1.000019 +++ exited with 0 +++\n',
]


@pytest.fixture
def always_apart(monkeypatch):
    monkeypatch.setattr(joiner, "JOIN_APART_BYTES", 0)


def write_trace(path, lines):
    path.write_text("".join(lines), encoding="latin-1")
    return path


def test_the_child_reads_what_this_process_reads(tmp_path, always_apart):
    """Split calls joined, exits kept as records, a latin-1 byte intact, over several batches."""
    trace = write_trace(tmp_path / "t.trace", LINES * (2 * joiner.BATCH // len(LINES) + 1))
    apart, here = list(joiner.joined_calls(trace)), list(trace_calls(trace))
    assert apart == here and [type(item) for item in apart] == [type(item) for item in here]
    assert any(type(item) is not tuple for item in apart) and any("caf\xe9.h" in item[2] for item in apart
                                                                   if type(item) is tuple)


def test_a_small_trace_is_read_in_this_process(tmp_path):
    trace = write_trace(tmp_path / "t.trace", LINES)
    calls = joiner.joined_calls(trace)
    next(calls)
    assert not [p for p in psutil.Process().children() if joiner.__name__ in " ".join(p.cmdline())]
    calls.close()


def test_a_reader_that_stops_early_leaves_no_child_behind(tmp_path, always_apart):
    trace = write_trace(tmp_path / "t.trace", LINES * 5000)
    calls = joiner.joined_calls(trace)
    next(calls)
    (child,) = [p for p in psutil.Process().children() if joiner.__name__ in " ".join(p.cmdline())]
    calls.close()
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE


def test_a_child_that_cannot_read_the_trace_is_an_error_with_its_reason(tmp_path, always_apart):
    with pytest.raises(OSError, match=r"reading the trace .* failed: IsADirectoryError"):
        list(joiner.joined_calls(tmp_path))
