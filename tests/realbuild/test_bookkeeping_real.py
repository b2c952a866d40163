"""Build systems' bookkeeping on real builds: the Meson-shaped scenario (its configure step
writes meson-private/*.dat with random uuid4s and meson-logs/meson-log.txt with a start time;
every real output identical) is reproducible with the bookkeeping said once, and with
--count-bookkeeping unreproducible with the configure step named as its writer. A real Meson
project too, where meson is installed: `meson setup` is the step that writes its files."""

from __future__ import annotations

import json

import pytest

from conftest import SCENARIOS, buildfuzz

MESON_FILES = ["build/meson-logs/meson-log.txt", "build/meson-private/build.dat", "build/meson-private/coredata.dat"]


def run(tmp_path, source, command: str, *options) -> tuple[int, dict]:
    tmp_path.mkdir(exist_ok=True)
    report = tmp_path / "report.json"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", 4, "--seed", 1,
                       "--report-json", report, *options, "--", command, timeout=600)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(report.read_text())


def test_meson_shaped_bookkeeping_is_said_once_and_decides_nothing(tmp_path):
    code, report = run(tmp_path, SCENARIOS / "meson-bookkeeping", "make -j{jobs}")
    assert (code, report["verdict"], report["divergent_artifacts"]) == (0, "reproducible", [])
    differed = report["bookkeeping"]["differed"]
    assert [f["path"] for f in differed] == MESON_FILES and {f["tool"] for f in differed} == {"Meson"}
    assert report["bookkeeping"]["counted"] is False


def test_counted_bookkeeping_names_the_configure_step_that_wrote_it(tmp_path):
    code, report = run(tmp_path, SCENARIOS / "meson-bookkeeping", "make -j{jobs}", "--count-bookkeeping")
    assert (code, report["verdict"]) == (1, "unreproducible")
    assert sorted(a["path"] for a in report["divergent_artifacts"]) == MESON_FILES
    (culprit,) = report["culprits"]
    assert "configure.py build" in culprit["command"] and culprit["kind"] == "intrinsic"
    assert set(culprit["outputs"]) == set(MESON_FILES)


MESON = "meson setup build && ninja -C build -j{jobs}"
needs_meson = pytest.mark.needs("meson", "ninja", "gcc")


def meson_project(tmp_path, ops: str):
    source = tmp_path / "src"
    source.mkdir()
    (source / "meson.build").write_text("project('ops', 'c')\nlib = library('ops', 'ops.c')\n"
                                        "executable('app', 'main.c', link_with : lib)\n")
    (source / "ops.c").write_text(ops + "int ops_add(int a, int b) { return a + b; }\n")
    (source / "main.c").write_text("int ops_add(int, int);\nint main(void) { return ops_add(2, 3) != 5; }\n")
    return source


@needs_meson
def test_a_real_meson_library_is_reproducible_and_meson_setup_writes_its_bookkeeping(tmp_path):
    source, command = meson_project(tmp_path, ""), MESON
    code, report = run(tmp_path / "default", source, command)
    assert (code, report["verdict"]) == (0, "reproducible")
    assert set(MESON_FILES) <= {f["path"] for f in report["bookkeeping"]["differed"]}
    code, report = run(tmp_path / "counted", source, command, "--count-bookkeeping")
    assert (code, report["verdict"]) == (1, "unreproducible")
    setup = [c for c in report["culprits"] if c["command"] == "meson setup build"]
    assert len(setup) == 1 and set(MESON_FILES) <= set(setup[0]["outputs"])


@needs_meson
def test_a_real_difference_in_a_meson_build_names_its_compile_not_meson_setup(tmp_path):
    source = meson_project(tmp_path, 'const char *ops_built(void) { return __DATE__ " " __TIME__; }\n')
    code, report = run(tmp_path / "run", source, MESON)
    assert (code, report["verdict"]) == (1, "unreproducible")
    assert [c["outputs"] for c in report["culprits"]] == [["build/libops.so.p/ops.c.o"]]
