"""One domain model (fuzzer/model/, the report in fuzzer/model/report.py): the JSON report is its
encoding, its schema is generated from it and published in docs/, a report decodes back
only into what the types say, and reports stored by earlier versions still decode."""

from __future__ import annotations

import ast
import copy
import json
import re

import jsonschema
import msgspec
import pytest
from msgspec import structs

from conftest import ROOT
from fuzzer.campaign import run_campaign, stored
from fuzzer.config import FuzzConfig
from fuzzer.errors import UsageError
from fuzzer.execute.fake import FakeExecutor
from fuzzer.model import REPORT_SCHEMA, ExitCode, Kind, Verdict
from fuzzer.report import json_format
from fuzzer.report.schema import report_schema
from fuzzer.store import Store
from report_samples import HOSTILE_NAME, HOSTILE_TEXT, reproducible, unreproducible

PUBLISHED = ROOT / "docs" / "report.schema.json"
HOSTILE = HOSTILE_NAME + HOSTILE_TEXT  # a lone surrogate too: a file name that was not UTF-8


def hostile_names():
    """A report whose file names and commands are hostile (its verdict, kinds and statuses are not)."""
    report = unreproducible()
    return structs.replace(
        report, command=HOSTILE,
        divergent_artifacts=[structs.replace(a, path=HOSTILE) for a in report.divergent_artifacts],
        culprits=[structs.replace(c, command=HOSTILE, argv=[HOSTILE], outputs=[HOSTILE]) for c in report.culprits],
        hazards=[structs.replace(h, file=HOSTILE, reader=HOSTILE, steps=[HOSTILE]) for h in report.hazards],
        phases={HOSTILE: 1.0})


SAMPLES = [reproducible, unreproducible, hostile_names]


def test_the_published_schema_is_the_one_the_types_generate():
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    assert published == report_schema(), "regenerate it: buildfuzz schema > docs/report.schema.json"


@pytest.mark.parametrize("sample", SAMPLES)
def test_a_report_decodes_to_itself_and_encodes_to_the_same_bytes(sample):
    report = sample()
    text = json_format.render(report)
    again = json_format.load(text)
    assert again == report and json_format.render(again) == text
    jsonschema.Draft202012Validator(report_schema()).validate(json.loads(text))


def test_a_setting_read_into_a_str_subclass_is_written_as_its_text():
    class JobsRange(str):  # what cli/options.py reads --jobs into
        bounds = (1, 8)

    report = structs.replace(unreproducible(), settings={"jobs": {"value": JobsRange("1-8"), "source": "command line",
                                                                  "origin": "--jobs"}})
    assert json.loads(json_format.render(report))["settings"]["jobs"]["value"] == "1-8"


def test_decoding_gives_the_enums_and_writing_gives_their_strings():
    report = json_format.load(json_format.render(unreproducible()))
    assert report.verdict is Verdict.UNREPRODUCIBLE and report.culprits[0].kind is Kind(report.culprits[0].kind)
    assert json.loads(json_format.render(report))["verdict"] == "unreproducible"
    assert list(json_format.to_builtins(report))[0] == "schema"


@pytest.mark.parametrize("where", [
    lambda r: r,
    lambda r: r["culprits"][0],
    lambda r: r["hazards"][0],
    lambda r: r["divergent_artifacts"][0]["groups"][0],
    lambda r: r["runs"][1],
])
def test_an_unknown_key_is_refused_by_the_schema_and_by_the_decoder(where):
    data = json.loads(json_format.render(unreproducible()))
    where(data)["verdict_v2"] = "green"
    errors = list(jsonschema.Draft202012Validator(report_schema()).iter_errors(data))
    assert any("verdict_v2" in e.message for e in errors)
    with pytest.raises(msgspec.ValidationError, match="verdict_v2"):
        json_format.from_builtins(data)


def test_an_unknown_key_that_is_not_utf8_is_refused_as_unknown():
    data = {**json.loads(json_format.render(unreproducible())), HOSTILE: 1}
    with pytest.raises(msgspec.ValidationError, match="does not know"):
        json_format.from_builtins(data)


@pytest.mark.parametrize("break_it, where", [
    (lambda r: r.update(verdict="green"), "verdict"),
    (lambda r: r["culprits"][0].update(kind="bad luck"), "kind"),
    (lambda r: r.update(exit_reason="tired"), "exit_reason"),
    (lambda r: r["hazards"][0].update(status="maybe"), "status"),
    (lambda r: r["runs"][0].update(wall_s="fast"), "wall_s"),
])
def test_a_value_the_types_do_not_allow_is_refused_when_decoding(break_it, where):
    data = json.loads(json_format.render(unreproducible()))
    break_it(data)
    with pytest.raises(msgspec.ValidationError, match=where):
        json_format.from_builtins(data)


def test_a_report_stored_by_an_earlier_buildfuzz_still_decodes():
    """Before diffoscope's reports became files an artifact embedded `diff_html`; keys added
    since (packages, findings, confidence, audit, ...) were not written yet."""
    report = unreproducible()
    data = json_format.to_builtins(report)
    for key in ("packages", "findings", "confidence", "audit", "settings", "phases"):
        del data[key]
    for artifact in data["divergent_artifacts"]:
        artifact["diff_html"] = "<html>diffoscope</html>"
        del artifact["diff_files"], artifact["inside"], artifact["metadata_stabilizer"]
    for culprit in data["culprits"]:
        del culprit["writer_process"], culprit["fix"], culprit["fix_status"]
    again = json_format.from_builtins(copy.deepcopy(data))
    expected = structs.replace(report, packages=[], findings=[], confidence={}, audit=None, settings={}, phases={},
                               divergent_artifacts=[structs.replace(a, diff_files=[], inside=None,
                                                                    metadata_stabilizer=None)
                                                    for a in report.divergent_artifacts],
                               culprits=[structs.replace(c, writer_process=None, fix="", fix_status="")
                                         for c in report.culprits])
    assert again == expected


def test_a_schema_1_reports_hazard_runs_decode_as_numbers_and_traced_labels():
    """Schema 1 wrote a hazard's campaign runs (`run 3`) and traced runs in one list of labels."""
    report = unreproducible()
    data = json_format.to_builtins(report)
    data["schema"] = 1
    first, second = data["hazards"]
    first["runs"] = ["traced reference", "run 3", "traced rerun (jobs=4) #2", "run 12"]
    second["runs"] = []
    for hazard in data["hazards"]:
        del hazard["traced"]
    again = json_format.from_builtins(data)
    assert again.schema == REPORT_SCHEMA == 2
    assert [(h.runs, h.traced) for h in again.hazards] == [([3, 12], ["traced reference", "traced rerun (jobs=4) #2"]),
                                                           ([], [])]
    assert structs.replace(again, hazards=report.hazards) == report


def test_a_report_of_this_schema_keeps_its_hazard_runs_as_numbers():
    report = unreproducible()
    shown = structs.replace(report.hazards[0], runs=[2, 5], traced=["traced reference"])
    report = structs.replace(report, hazards=[shown, *report.hazards[1:]])
    data = json_format.to_builtins(report)
    assert data["hazards"][0]["runs"] == [2, 5]
    assert json_format.from_builtins(data) == report


def test_every_verdict_exits_as_the_readme_says():
    rows = re.findall(r"^\| (\d) \| .* \| `([a-z-]+)` \|$", (ROOT / "README.md").read_text(), re.MULTILINE)
    assert {Verdict(verdict): int(code) for code, verdict in rows} == {v: v.exit_code for v in Verdict}
    assert all(isinstance(v.exit_code, ExitCode) for v in Verdict)


def test_each_type_of_the_model_is_defined_once_in_fuzzer():
    found = {"Hazard", "Culprit", "Finding", "WriterProcess"}
    words = {"Verdict", "Kind", "ExitReason", "ExitCode", "Reason", "RunKind"}
    names = found | words
    defined: dict[str, list[str]] = {}
    for path in (ROOT / "fuzzer").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in names:
                defined.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert defined == {**{name: ["fuzzer/model/found.py"] for name in found},
                       **{name: ["fuzzer/model/vocabulary.py"] for name in words}}


@pytest.mark.parametrize("damage", [
    lambda r: r.update(verdict_v2="green"),  # written by a buildfuzz that knows more keys
    lambda r: r.update(verdict="green"),
    lambda r: r["runs"].append("not a run"),
])
def test_a_stored_report_the_types_refuse_is_one_line_for_explain(tmp_path, damage):
    config = FuzzConfig(source=tmp_path / "src", command="make -j{jobs}", store=tmp_path / "store", runs=4, seed=1,
                        jobs=(1, 8), axes=("jobs", "cpus", "jitter"), localize=False)
    config.source.mkdir()
    outcome = run_campaign(config, executor_factory=lambda spec: FakeExecutor(lambda p: {"out": str(p.ncpus == 1)}))
    store = Store(config.store)
    try:
        data = store.report(outcome.report.campaign)
        damage(data)
        store.save_report(outcome.report.campaign, data)
    finally:
        store.close()
    with pytest.raises(UsageError, match="cannot be read"):
        stored.stored_outcome(config.store, None)
