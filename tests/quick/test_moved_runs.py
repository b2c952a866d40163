"""A traced process run again in fresh directories (fuzzer/execute/moved.py): its inputs
written back, the traced directory's name replaced, nothing left behind."""

from __future__ import annotations

import glob
import tempfile
import time

import pytest

from fuzzer.execute.moved import DIR, MovedCall, run_moved

TRACED = "/tmp/build-via-sdist-k3j9ab"
# copies its input, and its directory unless given an argument
SCRIPT = 'cat src/in > out; [ -n "$1" ] || pwd >> out'


def call(script=SCRIPT, timeout=10.0):
    return MovedCall(("sh", "-c", script, "sh"), TRACED, {"PATH": "/usr/bin:/bin"}, (("src/in", b"hello\n"),),
                     "out", timeout)


def moved_dirs():
    return set(glob.glob(f"{tempfile.gettempdir()}/buildfuzz-moved-*"))


@pytest.fixture(autouse=True)
def own_tmp(tmp_path, monkeypatch):
    """A temporary directory of this test's: another test's runs, beside it, make their own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_each_run_has_its_own_directory():
    before = moved_dirs()
    as_traced = run_moved(call(), (), 3)
    given = run_moved(call(), (f"--map={DIR}=.",), 3)
    assert len(set(as_traced)) == 3 and None not in as_traced  # pwd differs every run
    assert len(set(given)) == 1 and None not in given  # the input alone: the same bytes
    assert moved_dirs() == before


def test_the_output_s_directory_is_there_as_the_wrapper_made_it():
    nested = MovedCall(("sh", "-c", "cat src/in > build/temp/out"), TRACED, {"PATH": "/usr/bin:/bin"},
                       (("src/in", b"hello\n"),), "build/temp/out", 10.0)
    assert None not in run_moved(nested, (), 1)


def test_the_traced_directory_s_name_in_its_argv_is_the_new_one():
    named = run_moved(call(f"cat src/in > out; echo {TRACED} >> out"), (), 2)
    assert len(set(named)) == 2


def test_a_run_that_fails_or_outlives_its_timeout_gives_none_and_is_ended():
    started = time.monotonic()
    assert run_moved(call("sleep 30 & sleep 30", timeout=0.3), (), 1) == [None]  # its group is ended
    assert run_moved(call("exit 3"), (), 1) == [None]
    assert time.monotonic() - started < 20
