"""Every external tool is wrapped in one module of fuzzer/tools and registered there."""

import os
import pkgutil

import pytest

import fuzzer.tools
from conftest import buildfuzz, problem
from fuzzer.tools import REGISTRY, Tool, ToolMissing, all_tools, strace


def test_every_wrapper_module_registers_its_tool():
    modules = {m.name for m in pkgutil.iter_modules(fuzzer.tools.__path__)}
    names = {tool.name for tool in all_tools()}
    assert {"strace", "setarch", "faketime", "diffoscope", "make", "disorderfs", "cc"} <= modules <= names
    assert names - modules <= {"fusermount"}  # disorderfs's module also wraps the unmount
    assert all(tool.package and tool.purpose for tool in REGISTRY.values())


def test_missing_tool_names_its_package():
    tool = Tool("no-such-tool-xyz", "xyz-utils", "testing")
    assert "'xyz-utils'" in tool.problem()
    try:
        tool.require()
    except ToolMissing as e:
        assert "'xyz-utils'" in str(e) and "testing" in str(e)
    else:
        raise AssertionError("require() of a missing tool must raise")


def test_doctor_lists_every_tool():
    r = buildfuzz("doctor")  # a real process: it probes the tools as a fresh process finds them
    assert r.returncode == 0
    for tool in all_tools():
        assert tool.name in r.stdout


def test_a_tool_is_usable_when_found_and_its_probe_says_so():
    assert Tool("sh", "dash", "testing").problem() is None
    assert Tool("sh", "dash", "testing", probe=lambda: "no FUSE here").problem() == "no FUSE here"
    never = Tool("no-such-tool-xyz", "xyz-utils", "testing", probe=lambda: pytest.fail("probed a missing tool"))
    assert "'xyz-utils'" in never.problem()


def test_needs_strace_asks_whether_strace_traces_not_whether_it_is_on_path(tmp_path, monkeypatch):
    """Where ptrace is forbidden strace is on PATH but every trace fails: the tests that
    need it are skipped, as the campaign turns localization off, instead of failing."""
    fake = tmp_path / "strace"
    fake.write_text("#!/bin/sh\necho 'strace: PTRACE_TRACEME: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    strace._traces.cache_clear()
    try:
        assert strace.STRACE.path() == str(fake)
        reason = problem("strace")
    finally:
        strace._traces.cache_clear()  # the real strace again for the tests after this one
    assert reason is not None and "Operation not permitted" in reason


def test_needs_knows_the_capabilities_it_is_asked_for(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert problem("2 cpus") is not None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert problem("2 cpus") is None
    with pytest.raises(ValueError):
        problem("strcae")  # a misspelt name is an error, never a silent skip
