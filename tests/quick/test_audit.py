"""The step audit (`--check-steps`) on real traced builds, and its bad input."""

from __future__ import annotations


import pytest

from conftest import buildfuzz, buildfuzz_in_process, make_project


GENERATED = """
    all: out/app.txt
    out/seeded.txt: gen_seeded.py
        mkdir -p out && python3 gen_seeded.py > $@
    out/plain.txt: gen_plain.py
        mkdir -p out && python3 gen_plain.py > $@
    out/app.txt: out/seeded.txt out/plain.txt
        cat out/seeded.txt out/plain.txt > $@
    """


FILES = {
    "gen_plain.py": 'print(",".join(sorted({"alpha", "beta", "gamma", "delta"})))\n',
    # by hand: a new order in 3 of 3 runs, one order in 2 runs with PYTHONHASHSEED=0
    "gen_seeded.py": 'print(",".join({"alpha", "beta", "gamma", "delta", "eps", "zeta"}))\n',
}


def assert_one_line_error(result, words):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("buildfuzz: error:"), result.stderr


@pytest.mark.parametrize("share", ["0", "1.5", "150%", "-1", "half"])
def test_a_share_outside_zero_one_is_refused(tmp_path, share):
    src = make_project(tmp_path / "src", GENERATED, FILES)
    r = buildfuzz_in_process("run", "--source", src, "--store", tmp_path / "s", "--check-steps", share, "--", "make")
    assert_one_line_error(r, "--check-steps")
    assert not (tmp_path / "s").exists()


def test_without_tracing_the_audit_is_refused(tmp_path):
    src = make_project(tmp_path / "src", GENERATED, FILES)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "strace").write_text("#!/bin/sh\necho 'ptrace: Operation not permitted' >&2\nexit 1\n")
    (fake / "strace").chmod(0o755)
    import os
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--check-steps", "all", "--", "make",
                  env={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert_one_line_error(r, "--check-steps needs tracing")


def test_the_settings_file_sets_check_steps_and_is_checked_alike(tmp_path):
    src = make_project(tmp_path / "src", GENERATED, FILES)
    (src / "buildfuzz.toml").write_text('check-steps = "0%"\n')
    r = buildfuzz_in_process("run", "--source", src, "--store", tmp_path / "s", "--", "make")
    assert_one_line_error(r, "--check-steps")


def test_the_audit_section_survives_a_stored_report():
    from fuzzer.report import json_format
    from fuzzer.model import AuditedStep, AuditSummary, Report

    step = AuditedStep("gen (in .) #0", "gen", ".", ["out"], "varies", "5 distinct outputs", 5, 1.5,
                       "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00", "cd . && gen")
    audit = AuditSummary(0.1, 10, 1, 1, 9, "left for later campaigns", 2, 1.6, 1.5, [step])
    report = Report("make", "unreproducible", [], 0, [], audit=audit)
    assert json_format.load(json_format.render(report)) == report
