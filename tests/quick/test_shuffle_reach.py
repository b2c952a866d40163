"""The shuffle axis's reach: a traced build that ran a make with no --shuffle (GNU make 4.3
as debian/rules's #! interpreter) or no make at all was not shuffled, and the report's
scope says so instead of counting its seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzer import axes
from fuzzer.campaign.explore import _shuffle_unreached, programs_ran
from fuzzer.trace.makes import make_programs
from fuzzer.config import FuzzConfig
from fuzzer.tools import make
from fuzzer.trace.process_model import Process
from fuzzer.trace.steps import BuildTrace


def _fake_make(directory: Path, version: str) -> str:
    directory.mkdir()
    path = directory / "make"
    path.write_text(f"#!/bin/sh\necho 'GNU Make {version}'\n")
    path.chmod(0o755)
    return str(path)


def _trace(*argvs: tuple[str, ...]) -> BuildTrace:
    processes = tuple(Process(i, 10 + i, None, argv, (argv,), ".", 0.0, 1.0, 0, None, ())
                      for i, argv in enumerate(argvs))
    return BuildTrace("/ws/tree", processes, (), {}, {})


def _reach(tmp_path, *argvs: tuple[str, ...], axes=("jobs", "shuffle")) -> dict[str, str]:
    config = FuzzConfig(source=tmp_path, command="make", store=tmp_path / "store", axes=axes)
    return _shuffle_unreached(config, make_programs(_trace(*argvs), tmp_path))


@pytest.fixture(autouse=True)
def _shuffle_available(monkeypatch):
    monkeypatch.setattr(make, "shuffle_problem", lambda: None)


def test_a_make_older_than_4_4_in_the_build_is_the_axis_problem(tmp_path):
    old = _fake_make(tmp_path / "old", "4.3")
    new = _fake_make(tmp_path / "new", "4.4")
    problem = _reach(tmp_path, (new, "-j2"), (old, "install"))["shuffle"]
    assert "GNU make 4.3" in problem and old in problem
    assert _reach(tmp_path, (new, "-j2")) == {}


def test_an_axis_not_asked_is_left_alone(tmp_path):
    old = _fake_make(tmp_path / "old", "4.3")
    assert _reach(tmp_path, (old, "-j2"), axes=("jobs",)) == {}


def test_a_build_without_make_leaves_shuffle_unread_and_a_make_run_by_a_script_s_first_line_reads_it(tmp_path):
    shuffle = (axes.BY_NAME["shuffle"],)
    wheel = _trace(("python3", "-m", "build"))
    assert axes.unread(shuffle, programs_ran(wheel, make_programs(wheel, tmp_path))) == ("shuffle",)
    (tmp_path / "debian").mkdir()
    (tmp_path / "debian" / "rules").write_text("#!/usr/bin/make -f\n%:\n\tdh $@\n")
    rules = _trace(("debian/rules", "binary"))
    assert axes.unread(shuffle, programs_ran(rules, make_programs(rules, tmp_path))) == ()
