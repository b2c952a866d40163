"""The truth set: every bundled scenario must meet every expectation, end to end."""

import shlex
import shutil

import pytest

from fuzzer.scenarios import check_scenario

from test_scenarios import BUNDLED


@pytest.mark.parametrize("scenario", BUNDLED, ids=[s.name for s in BUNDLED])
def test_bundled_scenario_meets_its_expectations(scenario):
    program = shlex.split(scenario.command)[0]
    if "/" not in program and shutil.which(program) is None:  # a real tool's build (autoreconf): .ci/run installs it
        pytest.skip(f"{program} is not installed")
    result = check_scenario(scenario, runs=None, seed=1, progress=lambda _: None)
    details = "\n".join(f"{c.name}: {c.status} {c.detail}" for c in result.checks)
    assert result.passed, f"{scenario.name}: {result.error}\n{details}"
    assert all(c.status == "pass" for c in result.checks), details  # nothing left pending
    if scenario.expect.kind == "race":
        assert result.report.hazards, "a race scenario must report the hazard behind it"
