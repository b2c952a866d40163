"""The report's JSON Schema (`buildfuzz schema`) is generated from the model and holds
for real reports; it is strict enough to reject a report that breaks the contract."""

import json

import pytest

from conftest import buildfuzz
from test_schema import VALIDATOR


@pytest.mark.parametrize("project, verdict", [("clean_project", 0), ("nproc_project", 1)])
def test_real_reports_validate(tmp_path, request, project, verdict):
    report = tmp_path / "report.json"
    result = buildfuzz("run", "-q", "--runs", "4", "--seed", "2", "--source", request.getfixturevalue(project),
                       "--report-json", report, "--store", tmp_path / "store", "--", "make", "-j{jobs}")
    assert result.returncode == verdict, result.stderr
    data = json.loads(report.read_text())
    VALIDATOR.validate(data)
    assert data["settings"]["runs"]["source"] == "command line"
