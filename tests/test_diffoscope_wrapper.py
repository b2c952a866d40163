"""diffoscope is optional: used for differing artifacts when on PATH, skipped silently when not."""

import os

import pytest

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.tools import diffoscope

FAKE = """#!/bin/sh
# stands in for diffoscope: report the format asked for and both files, exit 1 (= differ)
for a in "$@"; do case "$a" in --html) fmt=html;; --text) fmt=text;; esac; done
if [ "$fmt" = html ]; then echo "<html><body>fake-diffoscope $3 $4</body></html>"; else echo "fake-diffoscope text"; fi
exit 1
"""


@pytest.fixture
def fake_diffoscope(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "diffoscope").write_text(FAKE)
    (bin_dir / "diffoscope").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def test_missing_diffoscope_gives_none(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert diffoscope.report("/etc/hostname", "/etc/hostname", "text", 5) is None


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2+ CPUs to vary nproc")
def test_divergent_artifact_gets_diffoscope_text_and_html(fake_diffoscope, tmp_path, nproc_project):
    config = FuzzConfig(source=nproc_project, command="make", store=tmp_path / "s", runs=3, seed=1, localize=False)
    (artifact,) = run_campaign(config).report.divergent_artifacts
    assert artifact.diff == "fake-diffoscope text"
    assert artifact.diff_html.startswith("<html><body>fake-diffoscope")
