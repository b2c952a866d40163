"""The JSON Schema of the report (`buildfuzz schema`), generated from the report model.

Generated from the dataclasses' type hints rather than written by hand, so it cannot
drift from what `Report.to_json` writes. A few dozen lines over `dataclasses.fields`
do it: the model is plain dataclasses of str/int/float/bool, lists, dicts and optionals,
and moving it onto msgspec or cattrs only for the schema would touch every module that
builds a report.
"""

from __future__ import annotations

import dataclasses
import types
import typing

from fuzzer.plan import Reason
from fuzzer.report.model import EXIT_CODES, SCHEMA, Report
from fuzzer.settings import SOURCES

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
# a count of builds with its exact interval (fuzzer/rates.py), or {} where none applies
RATE = {
    "properties": {"seen": {"type": "integer"}, "builds": {"type": "integer"}, "low": {"type": "number"},
                   "high": {"type": "number"}, "confidence": {"type": "number"}, "method": {"type": "string"},
                   "text": {"type": "string"}, "campaigns": {"type": "integer"},
                   "upper_bound": {"type": ["number", "null"]}},
    "dependentRequired": {"seen": ["builds", "low", "high", "confidence", "method", "text"]},
}
# what the type hints cannot say: the values a reader may switch on
CONSTRAINTS = {
    ("Finding", "rate"): RATE,
    ("Finding", "pooled"): RATE,
    ("Report", "confidence"): RATE,
    ("Report", "verdict"): {"enum": sorted(EXIT_CODES)},
    ("Report", "schema"): {"const": SCHEMA},
    ("RunSummary", "reason"): {"enum": ["", *(r.value for r in Reason)]},
    ("Report", "settings"): {"additionalProperties": {
        "type": "object",
        "properties": {"value": {}, "source": {"enum": sorted(SOURCES.values())}, "origin": {"type": "string"}},
        "required": ["value", "source", "origin"],
    }},
}


def report_schema() -> dict:
    definitions: dict[str, dict] = {}
    root = _object(Report, definitions)
    return {
        "$schema": DIALECT,
        "title": "buildfuzz report",
        "description": f"What `buildfuzz run --report-json` writes (schema {SCHEMA}). Every key listed is "
                       "always written; later versions may add keys, so readers must ignore unknown ones.",
        **root,
        "$defs": definitions,
    }


def _object(cls: type, definitions: dict[str, dict]) -> dict:
    hints = typing.get_type_hints(cls)
    properties = {}
    for field in dataclasses.fields(cls):
        properties[field.name] = {**_type(hints[field.name], definitions),
                                  **CONSTRAINTS.get((cls.__name__, field.name), {})}
    # to_json (dataclasses.asdict) writes every field, defaulted or not
    return {"type": "object", "properties": properties, "required": list(properties)}


def _type(hint: object, definitions: dict[str, dict]) -> dict:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in SCALARS:
        return {"type": SCALARS[hint]}
    if dataclasses.is_dataclass(hint):
        if hint.__name__ not in definitions:
            definitions[hint.__name__] = {}  # placed first: a recursive model stops here
            definitions[hint.__name__] = _object(hint, definitions)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    if origin in (types.UnionType, typing.Union):
        return {"anyOf": [_type(arg, definitions) for arg in args]}
    if hint is list or origin is list:
        return {"type": "array", **({"items": _type(args[0], definitions)} if args else {})}
    if hint is dict or origin is dict:
        return {"type": "object", **({"additionalProperties": _type(args[1], definitions)} if args else {})}
    raise TypeError(f"no JSON Schema for the report field type {hint!r}")
