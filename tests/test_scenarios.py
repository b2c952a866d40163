"""The truth set: every bundled scenario must meet every expectation, end to end."""

import pytest

from conftest import SCENARIOS, buildfuzz
from fuzzer.config import UsageError
from fuzzer.report.model import Culprit, Report
from fuzzer.scenarios import Expect, check_scenario, find_scenarios, load_scenario, score

BUNDLED = find_scenarios([SCENARIOS])


@pytest.mark.slow
@pytest.mark.parametrize("scenario", BUNDLED, ids=[s.name for s in BUNDLED])
def test_bundled_scenario_meets_its_expectations(scenario):
    result = check_scenario(scenario, runs=None, seed=1, progress=lambda _: None)
    details = "\n".join(f"{c.name}: {c.status} {c.detail}" for c in result.checks)
    assert result.passed, f"{scenario.name}: {result.error}\n{details}"
    assert all(c.status == "pass" for c in result.checks), details  # nothing left pending
    if scenario.expect.kind == "race":
        assert result.report.hazards, "a race scenario must report the hazard behind it"


def test_there_are_enough_scenarios_of_every_kind():
    kinds = {s.expect.kind for s in BUNDLED}
    assert len(BUNDLED) >= 12
    assert {"intrinsic", "race", "order", "parallelism-level"} <= kinds
    assert any(s.expect.verdict == "reproducible" for s in BUNDLED)


def report(verdict="unreproducible", culprits=(), artifacts=(), failed=0, localized=True):
    from fuzzer.report.model import ArtifactFinding

    found = [ArtifactFinding(p, 2, [], [], [], False) for p in artifacts]
    return Report("make", verdict, [], failed, found, list(culprits), localized=localized)


def test_score_passes_and_fails_each_expectation():
    culprit = Culprit("python3 gen.py x", ["python3"], ".", ["x"], "intrinsic", stabilized_by=["ASLR"])
    expect = Expect("unreproducible", ("lib.so",), "gen.py", "intrinsic", None, "ASLR")
    good = score(expect, report(culprits=[culprit], artifacts=["lib.so", "x"]))
    assert all(c.status == "pass" for c in good)
    wrong = Culprit("cc -c x.c", ["cc"], ".", ["x.o"], "race")
    bad = {c.name: c.status for c in score(expect, report(culprits=[wrong], artifacts=["x"]))}
    assert bad == {"verdict": "pass", "artifacts": "FAIL", "culprit": "FAIL", "kind": "FAIL", "stabilized_by": "FAIL"}


def test_unlocalized_reports_are_pending_not_passing():
    expect = Expect("unreproducible", (), "gen.py", "race")
    checks = {c.name: c.status for c in score(expect, report(localized=False))}
    assert checks["culprit"] == "pending" and checks["kind"] == "pending"


def test_clean_scenario_must_name_no_culprit():
    culprit = Culprit("cc", ["cc"], ".", [], "race")
    checks = {c.name: c.status for c in score(Expect("reproducible"), report("reproducible", [culprit]))}
    assert checks["no culprit"] == "FAIL"


@pytest.mark.parametrize("text, message", [
    ("command = 'make'\n", "not a valid scenario"),
    ("command = 'make'\n[expect]\nverdict = 'maybe'\n", "verdict must be"),
    ("command = 'make'\n[expect]\nverdict = 'unreproducible'\nkind = 'cosmic'\n", "unknown kind"),
    ("this is not toml", "not a valid scenario"),
])
def test_bad_scenario_files(tmp_path, text, message):
    (tmp_path / "scenario.toml").write_text(text)
    with pytest.raises(UsageError, match=message):
        load_scenario(tmp_path)


def test_check_command_rejects_a_directory_without_scenarios(tmp_path):
    r = buildfuzz("scenarios", "check", tmp_path)
    assert r.returncode == 2 and "holds no scenario.toml" in r.stderr
