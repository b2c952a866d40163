"""The JSON report: the contract in docs/contracts.md (`schema` versions it)."""

from __future__ import annotations

import json

from fuzzer.report.model import Report


def render(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=True) + "\n"


def load(text: str) -> Report:
    return Report.from_json(json.loads(text))
