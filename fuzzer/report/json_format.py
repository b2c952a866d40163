"""The JSON report: the contract in docs/contracts.md (`schema` versions it), the
encoding of the report's types (fuzzer/model/report.py), and back, through fuzzer/structs.py.

A report decodes only into what the types say: a key they do not know or a value of the
wrong type is an error (`msgspec.ValidationError`), never dropped or kept as it came.
The exceptions are what an earlier buildfuzz wrote and this one no longer does: a key
(`RETIRED`), and schema 1's hazard `runs`, labels of campaign runs (`run 3`) and traced
runs in one list, now the campaign runs' numbers and the traced runs' labels apart. A
store keeps the reports of earlier nights, and they must still read.
"""

from __future__ import annotations

import json
import re

from fuzzer import structs
from fuzzer.model import REPORT_SCHEMA, Report

# what earlier versions wrote and this one dropped: {where: keys}
RETIRED = {"divergent_artifacts": ("diff_html",)}  # diffoscope's HTML, embedded before it became a file
CAMPAIGN_RUN = re.compile(r"run (\d+)")  # how schema 1 named a campaign run in a hazard's `runs`


def render(report: Report) -> str:
    # stdlib json for the text: ensure_ascii and its float spelling keep the report's bytes as they were
    return json.dumps(to_builtins(report), indent=2, ensure_ascii=True) + "\n"


def load(text: str) -> Report:
    return from_builtins(json.loads(text))


def to_builtins(report: Report) -> dict:
    """The report as JSON values (what the store keeps), its `schema` first."""
    data = structs.to_builtins(report)
    return {"schema": data.pop("schema"), **data}


def from_builtins(data: dict) -> Report:
    """A report from its JSON values: one this version wrote, or one a store kept from an earlier one."""
    return structs.convert(_hazard_runs_split(_without_retired(data)), Report)


def _without_retired(data: dict) -> dict:
    if not isinstance(data, dict):
        return data  # not a report: msgspec says what it is instead
    cleaned = dict(data)
    for key, retired in RETIRED.items():
        if isinstance(data.get(key), list):
            cleaned[key] = [{k: v for k, v in item.items() if k not in retired} if isinstance(item, dict) else item
                            for item in data[key]]
    return cleaned


def _hazard_runs_split(data: dict) -> dict:
    """A schema 1 report as this schema: each hazard's `runs` labels split into the campaign
    runs' numbers (`runs`) and the traced runs' labels (`traced`)."""
    if not isinstance(data, dict) or data.get("schema") != 1:
        return data
    upgraded = {**data, "schema": REPORT_SCHEMA}
    if isinstance(data.get("hazards"), list):
        upgraded["hazards"] = [_hazard_of_schema_1(h) if isinstance(h, dict) else h for h in data["hazards"]]
    return upgraded


def _hazard_of_schema_1(hazard: dict) -> dict:
    labels = hazard.get("runs", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return hazard  # not what schema 1 wrote: msgspec says what is wrong with it
    numbered = [CAMPAIGN_RUN.fullmatch(label) for label in labels]
    return {**hazard, "runs": [int(m[1]) for m in numbered if m],
            "traced": [label for label, m in zip(labels, numbered) if not m]}
