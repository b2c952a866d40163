"""Rates with confidence: every finding's k of n builds with its exact interval, the bound
a reproducible verdict earned, counts pooled over campaigns, and --until-confidence.

Campaigns run on the FakeExecutor; the intervals are checked against values computed by
hand from the binomial distribution (and the classic tables: 3 of 12 is 5.5%–57.2%)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from types import SimpleNamespace

import pytest
from msgspec import structs

from conftest import buildfuzz_in_process
from fuzzer import rates
from fuzzer.campaign import run_campaign
from fuzzer.campaign import state as campaign_state
from fuzzer.config import FuzzConfig
from fuzzer.execute.fake import FakeExecutor
from fuzzer.model import ArtifactFinding, Report, RunSummary, VariantSummary
from fuzzer.plan import Perturbation
from fuzzer.report import html, junit, text
from fuzzer.report.schema import report_schema
from fuzzer.stats import binomial_cdf, clean_builds_for_bound, interval, rate_text, upper_bound_zero

two_cpus = pytest.mark.needs("2 cpus")  # the builds differ by CPU count


def test_the_numbers_the_issue_quotes():
    assert clean_builds_for_bound(0.05) == 59
    assert upper_bound_zero(59) < 0.05 < upper_bound_zero(58)
    assert 0.2209 < upper_bound_zero(12) < 0.2210  # "below 22% at 95%" after 12 clean builds


def test_an_interval_is_exact_at_both_ends():
    low, high = interval(3, 12)
    assert (round(low, 4), round(high, 4)) == (0.0549, 0.5719)
    # each end leaves 2.5% in its tail, by definition of the Clopper–Pearson interval
    assert abs((1 - binomial_cdf(2, 12, low)) - 0.025) < 1e-9
    assert abs(binomial_cdf(3, 12, high) - 0.025) < 1e-9
    assert rate_text(3, 12) == "3 of 12 builds (95% interval 5.5%–57%)"


def _run(index: int, status: str = "ok", group: str | None = "A", tail: str = "") -> RunSummary:
    return RunSummary(index, {}, status, 0 if status == "ok" else 2, 1.0, "d" if status == "ok" else None,
                      group if status == "ok" else None, log_tail=tail)


def _report(runs: list[RunSummary], artifacts=(), verdict: str = "unreproducible") -> Report:
    return Report("make", verdict, runs, sum(r.status != "ok" for r in runs), list(artifacts))


def test_an_artifact_counts_the_successful_builds_whose_variant_is_not_the_references():
    runs = [_run(0), _run(1, group="B"), _run(2), _run(3, group="B"), _run(4, "failed", tail="make: *** [x] Error 1")]
    artifact = ArtifactFinding("out.txt", 2, [VariantSummary("A", "a", [0, 2]), VariantSummary("B", "b", [1, 3])],
                               [], [], False)
    counted = rates.counts(runs, [artifact], [], [])
    assert sorted((c.seen, c.builds) for c in counted.values()) == [(1, 4), (2, 3)]  # the failure: 1 of 4 perturbed
    # a run chosen for having diverged before is not counted
    runs[1] = structs.replace(runs[1], reason="remembered")
    assert sorted((c.seen, c.builds) for c in rates.counts(runs, [artifact], [], []).values()) == [(1, 2), (1, 3)]


def test_a_reproducible_verdict_states_its_exact_bound():
    confidence = rates.verdict_confidence(_report([_run(i) for i in range(13)], verdict="reproducible"))
    assert confidence["seen"] == 0 and confidence["builds"] == 12
    assert confidence["text"].startswith("0 of 12 builds diverged: the chance of a divergence per build is "
                                         "below 22.1% at 95%")
    assert confidence["upper_bound"] == round(upper_bound_zero(12), 6)


def _config(tmp_path, **overrides) -> FuzzConfig:
    (tmp_path / "src").mkdir(exist_ok=True)
    base = FuzzConfig(source=tmp_path / "src", command="make -j{jobs}", store=tmp_path / "store", runs=8, seed=3,
                      jobs=(1, 8), axes=("jobs", "cpus", "jitter"), localize=False)
    return replace(base, **overrides)


def _campaign(tmp_path, outcome, **overrides):
    return run_campaign(_config(tmp_path, **overrides), executor_factory=lambda spec: FakeExecutor(outcome))


def one_cpu_differs(p: Perturbation) -> dict[str, str]:
    return {"out.txt": "y" if p.ncpus == 1 else "x"}


@two_cpus
def test_counts_are_pooled_over_campaigns_and_shown_in_every_format(tmp_path):
    first = _campaign(tmp_path, one_cpu_differs, seed=3).report
    second = _campaign(tmp_path, one_cpu_differs, seed=5).report
    one, two = first.findings[0], second.findings[0]
    assert one.id == two.id and one.rate["seen"] > 0
    drawn = [r for r in second.runs if r.index > 0 and r.reason != "remembered"]
    assert len(drawn) < len(second.runs) - 1 and two.rate["builds"] == len(drawn)  # the replays are left out
    assert two.pooled["campaigns"] == 2
    assert two.pooled["seen"] == one.rate["seen"] + two.rate["seen"]
    assert two.pooled["builds"] == one.rate["builds"] + two.rate["builds"]
    assert f"over 2 campaigns: {rate_text(two.pooled['seen'], two.pooled['builds'])}" in text.render(second)
    assert two.rate["text"] in html.render(second)
    cases = ET.fromstring(junit.render(second)).iter("failure")
    assert any(two.rate["text"] in (case.text or "") for case in cases)


@two_cpus
def test_a_fixed_finding_adds_its_clean_builds_to_the_pooled_count(tmp_path):
    _campaign(tmp_path, one_cpu_differs, seed=3)
    fixed = _campaign(tmp_path, lambda p: {"out.txt": "x"}, seed=5).report
    [finding] = fixed.findings
    assert finding.status == "fixed" and finding.rate["seen"] == 0
    assert finding.pooled["builds"] > finding.rate["builds"] and finding.pooled["campaigns"] == 2


def test_until_confidence_builds_until_the_bound_is_met(tmp_path):
    outcome = _campaign(tmp_path, lambda p: {"out.txt": "x"}, runs=4, until_confidence=0.10)
    report = outcome.report
    assert report.exit_reason == "confidence reached"
    assert len(report.runs) == 1 + clean_builds_for_bound(0.10) == 30
    assert report.confidence["upper_bound"] < 0.10
    assert any(n.startswith("--until-confidence 10.0%: met, 29 clean builds") for n in report.notes)


@two_cpus
def test_until_confidence_stops_as_before_once_the_builds_diverge(tmp_path):
    report = _campaign(tmp_path, one_cpu_differs, runs=6, until_confidence=0.05).report
    assert len(report.runs) == 6 and report.verdict == "unreproducible"


def test_until_confidence_that_the_budget_cuts_short_says_so(tmp_path, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(campaign_state, "time", SimpleNamespace(monotonic=lambda: now[0]))

    def tick(seconds):
        now[0] += seconds

    executor = FakeExecutor(lambda p: {"out.txt": "x"}, wall_s=10.0, clock=tick)
    config = _config(tmp_path, runs=3, until_confidence=0.01, budget_s=200.0)
    report = run_campaign(config, executor_factory=lambda spec: executor).report
    assert 3 <= len(report.runs) < 20 and report.exit_reason == "budget spent"
    assert any("not met" in n and "budget spent" in n for n in report.notes)


@pytest.mark.parametrize("value", ["0", "100%", "1.5", "five"])
def test_a_bad_until_confidence_is_one_line(tmp_path, value):
    (tmp_path / "src").mkdir()
    result = buildfuzz_in_process("run", "--source", str(tmp_path / "src"), "--until-confidence", value, "--", "true")
    assert result.returncode == 2 and "--until-confidence" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_until_confidence_is_read_from_the_settings_file(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "buildfuzz.toml").write_text('until-confidence = "bad"\n')
    result = buildfuzz_in_process("run", "--source", str(tmp_path / "src"), "--", "true")
    assert result.returncode == 2 and "until-confidence" in result.stderr


def test_the_schema_describes_the_rates():
    schema = report_schema()
    assert schema["properties"]["confidence"]["properties"]["upper_bound"]
    assert "pooled" in schema["$defs"]["Finding"]["properties"]
    json.dumps(schema)
