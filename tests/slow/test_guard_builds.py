import os

import psutil

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.execute import local as local_module

from conftest import buildfuzz


def test_a_perturbed_build_that_stops_itself_fails_that_run_with_the_reason(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    # at -j1 (the reference) the build is fine; with more jobs it stops itself for good
    marker = f"self-stopper-{os.getpid()}"  # its own: the quick guard tests stop themselves too, maybe at once
    command = f"sh -c ': {marker}; test {{jobs}} -gt 1 && while :; do kill -STOP $$; done; echo ok > out'"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", 2, "--jobs", "1-2",
                       "--no-jitter", "--no-localize", "--", command, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "build stopped itself (SIGSTOP); resumed once, stopped again: ended" in result.stdout
    assert not [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]


def test_without_timeout_a_run_that_hangs_is_ended_by_the_default_one(tmp_path, monkeypatch):
    monkeypatch.setattr(local_module, "TIMEOUT_FLOOR_S", 1.0)  # the rule stays; only the floor shrinks
    source = tmp_path / "src"
    source.mkdir()
    # at -j1 (the reference) it ends at once; at -j2 it would sleep for a minute
    config = FuzzConfig(source=source, command="sh -c 'test {jobs} -gt 1 && sleep 60; echo ok > out'",
                        store=tmp_path / "store", runs=2, jobs=(1, 2), axes=("jobs",), localize=False)
    reference, hung = run_campaign(config).report.runs
    assert (reference.status, hung.status) == ("ok", "timeout")
    expected = local_module.default_timeout(None, reference.wall_s)  # 10 x the reference, at least 1 s here
    assert f"still running after the timeout of {expected:g} s: killed" in hung.log_tail
