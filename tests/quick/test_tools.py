"""Every external tool is wrapped in one module of fuzzer/tools and registered there."""

import pkgutil

import fuzzer.tools
from conftest import buildfuzz
from fuzzer.tools import REGISTRY, Tool, ToolMissing, all_tools


def test_every_wrapper_module_registers_its_tool():
    modules = {m.name for m in pkgutil.iter_modules(fuzzer.tools.__path__)}
    names = {tool.name for tool in all_tools()}
    assert {"strace", "setarch", "faketime", "diffoscope", "make", "disorderfs", "cc"} <= modules <= names
    assert names - modules <= {"fusermount"}  # disorderfs's module also wraps the unmount
    assert all(tool.package and tool.purpose for tool in REGISTRY.values())


def test_missing_tool_names_its_package():
    tool = Tool("no-such-tool-xyz", "xyz-utils", "testing")
    assert not tool.available()
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
