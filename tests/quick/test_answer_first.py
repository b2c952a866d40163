"""The answer first (issue 31, deliverables 1 and 2): the verdict, counts that add up, one
block per cause grouped only where one rule or recipe ran the steps, the rest folded, and
the verdict again last. Asserted on fields and line positions, not on phrasing."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import structs

from fuzzer.model import Basis, Culprit, Kind, Report, RunSummary, Verdict
from fuzzer.report import markdown, text
from fuzzer.report.causes import causes, evidence_line, same_cause
from fuzzer.report.counts import basis, build_counts, closing_line, count_line
from tests.report_samples import reproducible, unreproducible

KERNELS = ["fft8x8", "fft16x16", "ifft8x8", "winograd", "relu"]
LONG_EVIDENCE = "; ".join(f"clause {i} " + "x" * 60 for i in range(8))


def _generator(stem: str, **extra) -> Culprit:
    fields = dict(command=f"python3 gen.py kernels/{stem}.k -o {stem}.s", argv=[], cwd=".", outputs=[f"{stem}.s"],
                  kind=Kind.INTRINSIC, stabilized_by=["ASLR"], evidence=LONG_EVIDENCE,
                  chain=["libnnp.so", f"{stem}.o", f"{stem}.s"])
    return Culprit(**{**fields, **extra})


def _with(report: Report, **fields) -> Report:
    return structs.replace(report, **fields)


# --- grouping ------------------------------------------------------------------------------

def test_culprits_of_one_pattern_rule_are_one_cause_listed_once():
    report = _with(unreproducible(), culprits=[_generator(k) for k in KERNELS], hazards=[])
    [cause] = causes(report)
    assert len(cause.steps) == len(KERNELS) and cause.steps[0] == report.culprits[0].command
    out = text.render(report)
    assert out.count(LONG_EVIDENCE[:40]) == 1  # the evidence once, not once per step
    assert LONG_EVIDENCE not in out  # and cut to one line: the whole is behind --verbose
    assert LONG_EVIDENCE in text.render(report, verbose=True).replace("\n    ", "")


def test_a_different_kind_stabiliser_or_rule_keeps_culprits_apart():
    base = _generator("relu", rule="Makefile:22")
    for other in (_generator("fft8x8", rule="Makefile:22", stabilized_by=["PYTHONHASHSEED"]),
                  _generator("fft8x8", rule="Makefile:22", kind=Kind.ORDER),
                  _generator("fft8x8", rule="Makefile:30"),  # same template, another rule
                  _generator("fft8x8", command="python3 other.py kernels/fft8x8.k -o fft8x8.s")):
        assert not same_cause(base, other)
        assert len(causes(_with(unreproducible(), culprits=[base, other], hazards=[]))) == 2
    # one rule line: one cause, whatever the commands
    assert same_cause(base, _generator("fft8x8", rule="Makefile:22", command="sh -c 'other words'"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KERNELS), st.sampled_from([Kind.INTRINSIC, Kind.ORDER]),
                          st.sampled_from([["ASLR"], ["PYTHONHASHSEED"], []]),
                          st.sampled_from(["", "Makefile:22", "Makefile:30"])), min_size=1, max_size=8))
def test_every_culprit_is_in_exactly_one_cause_of_its_own_kind_and_stabilisers(picked):
    culprits = [_generator(stem, kind=kind, stabilized_by=stab, rule=rule) for stem, kind, stab, rule in picked]
    found = causes(_with(unreproducible(), culprits=culprits, hazards=[]))
    assert sorted(id(c) for cause in found for c in cause.culprits) == sorted(map(id, culprits))
    for cause in found:
        assert all(same_cause(cause.lead, c) for c in cause.culprits)


# --- the terminal report's shape -----------------------------------------------------------

def test_the_verdict_comes_first_the_causes_before_any_list_and_the_verdict_with_its_exit_code_last():
    report = unreproducible()
    lines = text.render(report).splitlines()
    assert lines[0].startswith("verdict: UNREPRODUCIBLE")
    first_cause = next(i for i, line in enumerate(lines) if line.startswith("cause 1 of "))
    assert first_cause < min(i for i, line in enumerate(lines) if "artifacts" in line or line.startswith("failed"))
    assert lines[-1] == closing_line(report) and f"exit {int(report.exit_code)}" in lines[-1]
    # folded: no line per variant per artifact, unless --verbose
    assert not any(re.match(r"\s+[A-Z]: runs ", line) for line in lines)
    assert any(re.match(r"\s+[A-Z]: runs ", line) for line in text.render(report, verbose=True).splitlines())


def test_a_reproducible_report_is_verdict_counts_and_closing_line():
    report = reproducible()
    lines = text.render(report).splitlines()
    assert lines[0].startswith("verdict: REPRODUCIBLE") and lines[-1] == closing_line(report)
    assert not any(line.startswith("cause ") for line in lines)


def test_a_cause_shows_its_rule_missing_edge_and_fix_fields():
    culprit = _generator("relu", fix="fixes/relu.patch", fix_status="proven: 12 of 12 builds identical")
    hazard = structs.replace(unreproducible().hazards[0], reader=culprit.command, missing_edge="relu.s: gen.h",
                             rule="Makefile:22")
    report = _with(unreproducible(), culprits=[culprit], hazards=[hazard])
    [cause] = causes(report)
    assert cause.hazards == (hazard,) and cause.rule == "Makefile:22"
    block = text.render(report).split("cause 1 of 1", 1)[1].split("\n\n", 1)[0]
    for field in ("Makefile:22", "relu.s: gen.h", "fixes/relu.patch", culprit.fix_status, "ASLR", "libnnp.so"):
        assert field in block
    assert "Makefile:22" in markdown.render(report).split("### Cause 1 of 1", 1)[1].split("<details>", 1)[0]


def test_evidence_line_is_one_line_within_its_limit():
    for evidence in (LONG_EVIDENCE, "short", "x" * 500, "a;\nb; c"):
        line = evidence_line(evidence, 80)
        assert "\n" not in line and len(line) <= 80


# --- counts that add up --------------------------------------------------------------------

RUN = st.tuples(st.sampled_from(["ok", "failed"]), st.booleans(),  # status, differs from the reference
                st.sampled_from(["sample", "extreme", "remembered", "target", "control"]),
                st.sampled_from([None, "hold", "shuffle"]))


def _campaign(outcomes: list[tuple[str, bool, str, str | None]]) -> Report:
    runs = [RunSummary(0, {"jobs": 1, "cpus": [0], "jitter": 0.0, "seed": 0}, "ok", 0, 1.0, "a", "A",
                       reason="reference")]
    for index, (status, differs, reason, variation) in enumerate(outcomes, 1):
        perturbation = {"jobs": 4, "cpus": [0], "jitter": 0.0, "seed": 0,
                        **({"variations": {variation: "1@ab" if variation == "hold" else "7"}} if variation else {})}
        group = None if status == "failed" else "B" if differs else "A"
        runs.append(RunSummary(index, perturbation, status, 0 if status == "ok" else 2, 1.0, group, group,
                               reason=reason))
    shown = any(r.status == "failed" or r.group != "A" for r in runs)
    report = structs.replace(reproducible(), runs=runs,
                             verdict=Verdict.UNREPRODUCIBLE if shown else Verdict.REPRODUCIBLE)
    return structs.replace(report, basis=basis(report))


@settings(max_examples=200, deadline=None)
@given(st.lists(RUN, min_size=1, max_size=12))
def test_the_count_sentence_adds_up_and_never_reads_against_the_verdict(outcomes):
    report = _campaign(outcomes)
    counts = build_counts(report)
    assert counts.drawn.total + counts.chosen.total == len(report.runs) - 1  # every perturbed build, once
    showed = counts.drawn.differed + counts.drawn.failed + counts.chosen.differed + counts.chosen.failed
    assert bool(showed) == (report.verdict == Verdict.UNREPRODUCIBLE)
    numbers = [int(n) for n in re.findall(r"\d+", count_line(report))]
    assert numbers[:4] == [counts.drawn.total, len(counts.drawn.differed), len(counts.drawn.failed),
                           len(counts.drawn.matched)]
    assert count_line(report) in text.render(report).splitlines()[1]


@settings(max_examples=200, deadline=None)
@given(st.lists(RUN, min_size=1, max_size=12))
def test_a_verdict_resting_on_held_or_shuffled_builds_alone_says_so_first_and_in_the_json(outcomes):
    report = _campaign(outcomes)
    shown = [r for r in report.runs[1:] if r.status == "failed" or r.group != "A"]
    contrived = [bool(r.perturbation.get("variations")) for r in shown]
    expected = Basis.NONE if not shown else Basis.HELD_OR_SHUFFLED if all(contrived) else Basis.PLAIN
    assert report.basis == expected
    first = text.render(report).splitlines()[0]
    only = [str(r.index) for r in shown] if expected == Basis.HELD_OR_SHUFFLED else []
    assert all(number in first for number in only)
    # a plain verdict's first line goes straight to its run counts; one resting on held or shuffled builds says so
    assert first.startswith(f"verdict: {report.verdict.upper()} (") == (expected != Basis.HELD_OR_SHUFFLED)


def test_the_first_line_names_the_step_a_held_run_held_back():
    from fuzzer import hold

    report = _campaign([("ok", False, "sample", None), ("failed", False, "target", "hold"),
                        ("ok", False, "control", None)])
    held = structs.replace(report.runs[2], perturbation={**report.runs[2].perturbation,
                                                         "variations": {"hold": hold.value(("mkdir", "-p", "obj"), 200)}})
    hazard = structs.replace(unreproducible().hazards[0], writer="mkdir -p obj")
    report = structs.replace(report, runs=[*report.runs[:2], held, report.runs[3]], hazards=[hazard])
    assert basis(report) == Basis.HELD_OR_SHUFFLED
    first = text.render(report).splitlines()[0]
    assert "mkdir -p obj" in first and "2" in first
    # an unknown hash names no step rather than a wrong one
    other = structs.replace(report, hazards=[structs.replace(hazard, writer="mkdir -p lib")])
    assert "mkdir -p" not in text.render(other).splitlines()[0]
