"""Which make programs a traced build ran: by name on its PATH, by path, and as a script's
`#!` interpreter (`debian/rules`), read from the source tree."""

from __future__ import annotations

import os

from fuzzer.trace.makes import make_programs
from fuzzer.trace.process_model import Process
from fuzzer.trace.steps import BuildTrace

WORKSPACE = "/ws/tree"


def _trace(*execs: tuple[tuple[str, ...], str, tuple[str, ...] | None]) -> BuildTrace:
    processes = tuple(Process(i, 100 + i, None, argv, (argv,), cwd, 0.0, 1.0, 0, None, (), env=env)
                      for i, (argv, cwd, env) in enumerate(execs))
    return BuildTrace(WORKSPACE, processes, (), {}, {})


def _executable(path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_a_make_by_name_is_found_on_the_path_its_process_had(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = _executable(bin_dir / "make", "#!/bin/sh\n")
    trace = _trace((("make", "-j1"), ".", (f"PATH={bin_dir}:/nowhere",)))
    assert make_programs(trace, tmp_path / "src") == {os.path.realpath(fake): ("make", "-j1")}


def test_a_make_by_path_is_that_path_and_other_programs_are_none(tmp_path):
    trace = _trace((("/opt/make", "install"), ".", None), (("cc", "-c", "a.c"), ".", None),
                   (("/opt/x/gmake",), "sub", None))
    assert make_programs(trace, tmp_path) == {"/opt/make": ("/opt/make", "install"),
                                              "/opt/x/gmake": ("/opt/x/gmake",)}


def test_a_script_run_by_its_make_line_names_that_make_read_from_the_source(tmp_path):
    source = tmp_path / "src"
    (source / "debian").mkdir(parents=True)
    _executable(source / "debian" / "rules", "#!/opt/old/make -f\n%:\n\tdh $@\n")
    _executable(source / "configure", "#!/bin/sh\nexit 0\n")
    _executable(source / "debian" / "helper", "#!/opt/older/make -f\n")
    # a trace's cwd is workspace-relative ("." its root), absolute outside it
    trace = _trace((("debian/rules", "binary"), ".", None), (("./configure",), ".", None),
                   (("./rules", "clean"), "debian", None), (("./gone",), ".", None),
                   (("./helper",), f"{WORKSPACE}/debian", None))
    assert make_programs(trace, source) == {"/opt/old/make": ("debian/rules", "binary"),
                                            "/opt/older/make": ("./helper",)}
