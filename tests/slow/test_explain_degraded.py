"""Without strace, buildfuzz still compares artifacts and says why it names no step."""

from dataclasses import replace

import pytest

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.tools import strace


@pytest.mark.needs("2 cpus")
def test_no_strace_falls_back_to_artifact_level(tmp_path, nproc_project, monkeypatch):
    missing = replace(strace.STRACE, probe=lambda: "strace not found (install the Debian package 'strace')")
    monkeypatch.setattr(strace, "STRACE", missing)
    outcome = run_campaign(FuzzConfig(source=nproc_project, command="make", store=tmp_path / "s", runs=3, seed=1))
    report = outcome.report
    assert outcome.exit_code == 1 and report.verdict == "unreproducible"
    assert [a.path for a in report.divergent_artifacts] == ["out.txt"]
    assert report.culprits == [] and not report.localized
    assert any("step localization disabled: strace not found" in note for note in report.notes)
