"""Rates on hazards (manifest in k of n perturbed builds) and in the Markdown summary (each
finding's k of n with its interval, and the bound the verdict earned), as the JSON, JUnit
and HTML reports already show them. Campaigns run on the FakeExecutor."""

from __future__ import annotations

from msgspec import structs

from fuzzer import findings, rates
from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.execute.fake import FakeExecutor
from fuzzer.model import Hazard, RunSummary
from fuzzer.report import markdown
from fuzzer.stats import rate_text


def _run(index: int, status: str = "ok", reason: str = "sample") -> RunSummary:
    return RunSummary(index, {}, status, 0 if status == "ok" else 2, 1.0, "d" if status == "ok" else None,
                      "A" if status == "ok" else None, reason=reason)


def test_a_hazard_counts_the_drawn_builds_that_showed_it_never_traced_or_held_ones():
    runs = [_run(0, reason="reference"), _run(1, "failed"), _run(2), _run(3, "failed"), _run(4, reason="target"),
            _run(5)]
    shown = Hazard("read-before-write", "version.h", "cc main.c", "gen.py", status="manifest",
                   runs=[1, 3, 4], traced=["traced rerun (jobs=8 cpus=0-1)"])
    latent = Hazard("write-write", "out.txt", "a", "b", traced=["traced reference", "traced rerun (jobs=8)"])
    counted = rates.counts(runs, [], [], [shown, latent])
    # run 4 held a step back on purpose (a target): chosen, not drawn; the traced rerun is no campaign build
    assert counted[findings.of_hazard(shown).id] == rates.Count(2, 4)
    assert counted[findings.of_hazard(latent).id] == rates.Count(0, 4)
    assert rates.builds_of(runs, findings.HAZARD) == 4  # what a campaign that found it fixed adds


def _campaign(tmp_path, outcome, seed: int = 3):
    (tmp_path / "src").mkdir(parents=True, exist_ok=True)
    config = FuzzConfig(source=tmp_path / "src", command="make -j{jobs}", store=tmp_path / "store", runs=8,
                        seed=seed, jobs=(1, 8), axes=("jobs", "cpus", "jitter"), localize=False)
    return run_campaign(config, executor_factory=lambda spec: FakeExecutor(outcome)).report


def test_the_markdown_summary_gives_each_findings_rate_and_the_verdicts_bound(tmp_path):
    diverging = _campaign(tmp_path / "a", lambda p: {"out.txt": "y" if p.jobs > 4 else "x"})
    [finding] = [f for f in diverging.findings if f.kind == "artifact"]
    summary = markdown.render(diverging)
    assert "### How often (exact 95% intervals)" in summary
    assert f"- out.txt: {rate_text(finding.rate['seen'], finding.rate['builds'])}" in summary
    assert diverging.confidence["text"] in summary
    clean = _campaign(tmp_path / "b", lambda p: {"out.txt": "x"})
    assert clean.reproducible and "How often" not in markdown.render(clean)
    assert f"0 of {clean.confidence['builds']} builds diverged: the chance of a divergence per build is below " \
        in markdown.render(clean)


def test_a_finding_found_fixed_gets_no_rate_line(tmp_path):
    report = _campaign(tmp_path, lambda p: {"out.txt": "y" if p.jobs > 4 else "x"})
    fixed = structs.replace(report, findings=[structs.replace(f, status=findings.FIXED) for f in report.findings])
    assert "How often" not in markdown.render(fixed)
