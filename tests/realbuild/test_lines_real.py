"""The line search end to end, on the bundled scenarios' real builds: the fields a patch
stage takes (fuzzer/explain/lines/), beyond the scenario files' `line` and `line_cause`."""

from pathlib import Path

import pytest

from fuzzer.model import Kind, LineCause, LineStatus
from fuzzer.scenarios import check_scenario, load_scenario

from conftest import SCENARIOS


def top_line(name: str):
    result = check_scenario(load_scenario(SCENARIOS / name), runs=None, seed=1, progress=lambda _: None)
    culprit = result.report.culprits[0]
    assert culprit.kind == Kind.INTRINSIC, culprit.evidence
    return culprit.line


@pytest.mark.needs("strace")
def test_a_set_whose_values_read_alike_is_named_though_control_flow_parts_calls_later():
    line = top_line("set-order-surfaces-later")
    assert (line.status, Path(line.file).name, line.line, line.function) == (LineStatus.FOUND, "gen_regs.py", 42,
                                                                             "number")
    assert (line.cause, line.container, line.elements, line.hashed_by) == (
        LineCause.SET_BY_ADDRESS, "set", ["__main__.Register"], "address+own")
    assert not line.differed and line.element == 1
    assert line.surfaced.split(" in ")[1] in ("short_form", "long_form")
    assert len(line.replays) == 2 and len(line.seconds) == 2 and line.budget_s > 0


@pytest.mark.needs("strace")
def test_a_perl_writer_is_named_and_the_search_says_it_is_python_only():
    line = top_line("perl-hash-order")
    assert line.status == LineStatus.SKIPPED and line.line == 0
    assert "m4cache.pl" in line.note and "PERL_HASH_SEED" in line.note


@pytest.mark.needs("strace")
def test_every_audited_generator_names_its_set_comprehension_and_the_replays_decide_its_cause():
    result = check_scenario(load_scenario(SCENARIOS / "audit-generator-chain"), runs=None, seed=1,
                            progress=lambda _: None)
    culprits = [c for c in result.report.culprits if c.kind == Kind.INTRINSIC]
    assert len(culprits) == 6
    for culprit in culprits:
        line = culprit.line
        assert (line.status, Path(line.file).name, line.line, line.container) == (LineStatus.FOUND, "gen.py", 46, "set")
        assert line.function.endswith("<listcomp>") and line.hashed_by == "address+own"
        expected = LineCause.SET_OF_STR if culprit.stabilized_by == ["PYTHONHASHSEED"] else LineCause.SET_BY_ADDRESS
        assert line.cause == expected, (culprit.stabilized_by, line)
