"""Writer processes in the contracts: the report's `writer_process` (JSON round trip and
schema), the scenario format's `writer` expectation and `localize_budget`, and the bench
that measures what writer-process replays save (its smoke mode)."""

from __future__ import annotations

from fuzzer.model import Culprit, Report, WriterProcess
from fuzzer.report import json_format
from fuzzer.report.schema import report_schema
from fuzzer.scenarios import Expect, load_scenario, score


WRITER = WriterProcess(command="perl m4cache.pl configure.ac", argv=["perl", "m4cache.pl", "configure.ac"], cwd=".",
                       identity="perl m4cache.pl configure.ac (in .), inside step sh ./configure.sh (in .)",
                       wrote=["autom4te.cache/requests"], replayed=True)


def culprit(writer: WriterProcess | None) -> Culprit:
    return Culprit("sh ./configure.sh", ["sh", "./configure.sh"], ".", ["autom4te.cache/requests"], "intrinsic",
                   stabilized_by=["PERL_HASH_SEED"], writer_process=writer)


def test_the_writer_process_survives_the_json_report_and_is_in_its_schema():
    report = Report("sh build.sh", "unreproducible", [], 0, [], [culprit(WRITER), culprit(None)])
    again = json_format.from_builtins(json_format.to_builtins(report))
    assert again.culprits[0].writer_process == WRITER and again.culprits[1].writer_process is None
    properties = report_schema()["$defs"]["WriterProcess"]["properties"]
    assert {"command", "argv", "cwd", "identity", "wrote", "replayed", "not_replayable"} <= properties.keys()


def test_the_writer_expectation_is_a_substring_of_the_top_culprits_writer():
    expect = Expect("unreproducible", (), "configure.sh", "intrinsic", writer="m4cache.pl")
    checks = lambda c: {x.name: x.status for x in score(expect, Report("sh", "unreproducible", [], 0, [], [c],
                                                                           localized=True))}
    assert checks(culprit(WRITER))["writer"] == "pass"
    assert checks(culprit(None))["writer"] == "FAIL"  # the step alone does not meet it


def test_a_scenario_may_bound_its_localization_budget(tmp_path):
    (tmp_path / "scenario.toml").write_text('command = "sh build.sh"\n[run]\nlocalize_budget = 60\n'
                                           '[expect]\nverdict = "unreproducible"\nwriter = "m4cache.pl"\n')
    scenario = load_scenario(tmp_path)
    assert scenario.localize_budget == 60 and scenario.expect.writer == "m4cache.pl"
