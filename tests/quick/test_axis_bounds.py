"""Each seeded axis's own bound: the drawn runs that took a seed of it (`--shuffle=SEED`),
how many failed or diverged, and with none, the exact bound 1 - 0.05^(1/n) that count earns
("shuffle: 7 seeds, none failed: a failure showing with 35% of seeds or more would have
shown at 95%"). Never `reverse` (one fixed order), never a run chosen rather than drawn."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import axes, rates
from fuzzer.model import AxisScope, Report, RunSummary
from fuzzer.report import html, json_format, junit, markdown, text
from fuzzer.stats import CONFIDENCE, interval, percent_above


def _run(index: int, shuffle: str | None = None, status: str = "ok", group: str = "A", reason: str = "sample",
         **more: str) -> RunSummary:
    varied = {**({"shuffle": shuffle} if shuffle else {}), **more}
    perturbation = {"jobs": 1, "cpus": [0], "jitter": 0.0, "seed": 0, **({"variations": varied} if varied else {})}
    ok = status == "ok"
    return RunSummary(index, perturbation, status, 0 if ok else 2, 1.0, "d" if ok else None, group if ok else None,
                      reason="reference" if index == 0 else reason)


def _report(runs: list[RunSummary]) -> Report:
    report = Report("make", "unreproducible", runs, sum(r.status != "ok" for r in runs), [])
    return msgspec.structs.replace(report, axis_bounds=rates.axis_bounds(report))


def _bound(report: Report, name: str = "shuffle"):
    return next(b for b in report.axis_bounds if b.axis == name)


def test_only_drawn_runs_with_a_seed_of_their_own_count():
    runs = [_run(0), _run(1, "reverse", reason="extreme"), _run(2, "11"), _run(3, "12", status="failed"),
            _run(4, "13", group="B"), _run(5, "14", reason="target"), _run(6, "15", reason="remembered"),
            _run(7), _run(8, "16", reason="extreme"), _run(9, "11", status="failed", reason="repeat")]
    bound = _bound(_report(runs))
    assert (bound.axis, bound.rate["seen"], bound.rate["builds"]) == ("shuffle", 2, 4)
    low, high = interval(2, 4)
    assert (bound.rate["low"], bound.rate["high"], bound.rate["upper_bound"]) == (round(low, 6), round(high, 6), None)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 80))
def test_n_clean_seeds_bound_the_share_that_would_fail_by_the_exact_rule(n):
    runs = [_run(0), _run(1, "reverse", reason="extreme"), *(_run(i + 2, str(1000 + i)) for i in range(n))]
    rate = _bound(_report(runs)).rate
    assert (rate["seen"], rate["builds"], rate["low"]) == (0, n, 0.0)
    bound = rate["upper_bound"]
    assert abs((1 - bound) ** n - (1 - CONFIDENCE)) < 1e-5  # a share this large stays hidden in 5% of campaigns
    assert percent_above(bound) in rate["text"]


def test_seven_clean_seeds_rule_out_thirty_five_percent():
    runs = [_run(0), *(_run(i, str(i)) for i in range(1, 8))]
    assert percent_above(_bound(_report(runs)).rate["upper_bound"]) == "35%"


def test_an_axis_of_a_few_fixed_values_or_a_failed_reference_has_no_bound():
    report = _report([_run(0), _run(1, "5", tz="UTC"), _run(2, tz="Etc/GMT-14")])
    assert [b.axis for b in report.axis_bounds] == ["shuffle"]  # tz draws from five zones: not trials of their own
    assert _report([_run(0, status="failed"), _run(1, "5")]).axis_bounds == []
    assert _report([_run(0), _run(1, "reverse", reason="extreme")]).axis_bounds == []


def test_every_seeded_axis_gets_its_own_bound():
    report = _report([_run(0), _run(1, "5", hashseed="9"), _run(2, hashseed="10", group="B")])
    assert {b.axis: (b.rate["seen"], b.rate["builds"]) for b in report.axis_bounds} == {"shuffle": (0, 1),
                                                                                        "hashseed": (1, 2)}
    assert all(axes.BY_NAME[b.axis].fresh for b in report.axis_bounds)


def test_the_bound_is_in_the_json_and_shown_where_the_verdicts_bound_is():
    report = _report([_run(0), *(_run(i, str(i)) for i in range(1, 8))])
    said = _bound(report).rate["text"]
    assert report.bounds == [said]
    assert json_format.load(json_format.render(report)).axis_bounds == report.axis_bounds
    for rendered in (text.render(report), markdown.render(report), html.render(report), junit.render(report)):
        assert said in rendered


def test_an_axis_whose_runs_did_not_reach_the_whole_build_earns_no_bound():
    runs = [_run(0), *(_run(i, str(100 + i)) for i in range(1, 6))]
    reached = _report(runs)
    scope = [AxisScope("shuffle", "make prerequisite order", 5, 6, problem="a make with no --shuffle ran")]
    unreached = msgspec.structs.replace(Report("make", "reproducible", runs, 0, []), scope=scope)
    assert [b.axis for b in reached.axis_bounds] == ["shuffle"]
    assert rates.axis_bounds(unreached) == []
