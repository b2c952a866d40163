"""diffoscope is optional: when on PATH it gets the variants under their real names and
writes its reports to files that the JSON report points at; it never embeds them."""

import os

import pytest

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.report import json_format

from test_diffoscope_wrapper import fake_diffoscope


@pytest.mark.needs("2 cpus")
def test_divergent_artifact_points_at_diffoscope_reports(fake_diffoscope, tmp_path, nproc_project):
    config = FuzzConfig(source=nproc_project, command="make", store=tmp_path / "s", runs=3, seed=1, localize=False)
    report = run_campaign(config).report
    (artifact,) = report.divergent_artifacts
    html = next(f for f in artifact.diff_files if f.endswith(".html"))
    assert "fake-diffoscope" in open(html).read()
    assert "fake-diffoscope" not in json_format.render(report)  # pointed at, never embedded
