"""A baseline: the findings `buildfuzz baseline` writes to a file, to review and commit, and
what `buildfuzz run --baseline FILE` reads back as known (a baseline file or a JSON report):
builds that differ only in known findings exit 0 (docs/contracts.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from fuzzer.errors import UsageError
from fuzzer.escaping import shown
from fuzzer.findings import ID_PATTERN, identities
from fuzzer.model import Report
from fuzzer.report import json_format

BASELINE_FORMAT = "buildfuzz-baseline"  # the key (and version) of a file `buildfuzz baseline` writes
BASELINE_VERSION = 1


def baseline_file(report: Report) -> dict:
    """What `buildfuzz baseline` writes: the report's findings, small enough to review and commit."""
    return {BASELINE_FORMAT: BASELINE_VERSION, "command": report.command, "source": report.source,
            "campaign": report.campaign,
            "findings": [{"id": f.id, "kind": f.kind, "what": f.what} for f in identities(report)]}


def read_baseline(path: Path) -> frozenset[str]:
    """The finding ids listed by a baseline file or a JSON report; a bad file is the user's error."""
    name = f"--baseline {shown(path)}"
    try:
        data = json.loads(path.read_bytes())
    except OSError as e:
        raise UsageError(f"{name}: {e.strerror}") from None
    except ValueError as e:  # not UTF-8, not JSON
        raise UsageError(f"{name} is not JSON: {e}") from None
    if isinstance(data, dict) and data.get(BASELINE_FORMAT) == BASELINE_VERSION:
        return _listed_ids(data.get("findings"), name)
    if isinstance(data, dict) and "verdict" in data:
        try:
            return frozenset(i.id for i in identities(json_format.from_builtins(data)))
        except msgspec.ValidationError as e:
            raise UsageError(f"{name} is not a JSON report this buildfuzz can read ({type(e).__name__}: {e})") from None
    raise UsageError(f"{name} is neither a baseline file (`buildfuzz baseline -o FILE`) "
                     "nor a JSON report (`buildfuzz run --report-json FILE`)")


def _listed_ids(findings: object, name: str) -> frozenset[str]:
    if not isinstance(findings, list):
        raise UsageError(f"{name}: 'findings' must be a list of {{\"id\": ...}} objects")
    ids = [f.get("id") if isinstance(f, dict) else None for f in findings]
    good = [i for i in ids if isinstance(i, str) and ID_PATTERN.fullmatch(i)]
    if len(good) < len(ids):
        bad = next(i for i in ids if i not in good)
        raise UsageError(f"{name}: {shown(bad)} is not a finding id (12 hexadecimal digits)")
    return frozenset(good)
