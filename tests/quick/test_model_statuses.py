"""A run's status and an audited step's result are enums of the domain model (fuzzer/model/):
a stored report decodes them into members, writes them as the strings every earlier
buildfuzz wrote, and refuses a value neither enum knows."""

from __future__ import annotations

import json

import msgspec
import pytest
from msgspec import structs

from fuzzer.model import AuditedStep, AuditResult, AuditSummary, RunStatus
from fuzzer.report import json_format
from fuzzer.report.schema import report_schema
from report_samples import unreproducible


def audited() -> dict:
    """A report with one step of each result, as JSON values."""
    steps = [AuditedStep(f"gen{i} (in .) #0", f"gen{i}", ".", ["out"], result) for i, result in enumerate(AuditResult)]
    audit = AuditSummary(1.0, len(steps), 3, 1, 1, "", 1, 1.0, 1.0, steps)
    return json.loads(json_format.render(structs.replace(unreproducible(), audit=audit)))


def test_the_strings_earlier_stores_hold_decode_into_the_members():
    data = audited()
    assert {r["status"] for r in data["runs"]} <= {"ok", "failed", "timeout"}
    assert [s["result"] for s in data["audit"]["steps"]] == ["stable", "varies", "replay-failed", "not-replayable", "left"]
    report = json_format.from_builtins(data)
    assert all(type(r.status) is RunStatus for r in report.runs)
    assert [s.result for s in report.audit.steps] == list(AuditResult)
    assert json.loads(json_format.render(report)) == data


@pytest.mark.parametrize("break_it, where", [
    (lambda r: r["runs"][1].update(status="exploded"), "status"),
    (lambda r: r["audit"]["steps"][0].update(result="flaky"), "result"),
])
def test_a_status_or_result_neither_enum_knows_is_refused(break_it, where):
    data = audited()
    break_it(data)
    with pytest.raises(msgspec.ValidationError, match=where):
        json_format.from_builtins(data)


def test_the_schema_lists_their_values():
    definitions = report_schema()["$defs"]
    assert sorted(definitions["RunStatus"]["enum"]) == sorted(RunStatus)
    assert sorted(definitions["AuditResult"]["enum"]) == sorted(AuditResult)


def test_only_steps_replayed_to_the_end_and_compared_count_as_replayed():
    assert {r for r in AuditResult if r.replayed} == {AuditResult.STABLE, AuditResult.VARIES}
