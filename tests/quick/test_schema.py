"""The report's JSON Schema (`buildfuzz schema`) is generated from the model and holds
for real reports; it is strict enough to reject a report that breaks the contract."""

import copy
import json

import jsonschema
import pytest

from fuzzer.model import REPORT_SCHEMA
from fuzzer.report import json_format
from fuzzer.report.schema import report_schema

from conftest import buildfuzz
from report_samples import reproducible, unreproducible


VALIDATOR = jsonschema.Draft202012Validator(report_schema())


def as_written(report) -> dict:
    return json.loads(json_format.render(report))


def test_the_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(report_schema())


def test_buildfuzz_schema_prints_it():
    result = buildfuzz("schema")  # a real process: the entry point, as a user starts it
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == report_schema()


@pytest.mark.parametrize("sample", [reproducible, unreproducible])
def test_sample_reports_validate(sample):
    VALIDATOR.validate(as_written(sample()))


@pytest.mark.parametrize("break_it, where", [
    (lambda r: r.pop("verdict"), "verdict"),
    (lambda r: r.update(verdict="green"), "verdict"),
    (lambda r: r.update(schema=REPORT_SCHEMA + 1), "schema"),  # a version this buildfuzz does not write
    (lambda r: r["runs"][0].update(exit_code="0"), "exit_code"),
    (lambda r: r["culprits"][0].pop("kind"), "kind"),
    (lambda r: r["divergent_artifacts"][0]["groups"][0].update(runs="1,2"), "runs"),
    (lambda r: r.update(settings={"runs": {"value": 3, "source": "somewhere", "origin": ""}}), "source"),
])
def test_a_broken_report_is_rejected(break_it, where):
    report = copy.deepcopy(as_written(unreproducible()))
    break_it(report)
    errors = list(VALIDATOR.iter_errors(report))
    assert errors and any(where in str(e.path) + e.message for e in errors)
