"""Scenario expectations on what the comparators saw inside the divergent artifacts:
members differing in content, artifacts differing only in metadata, and what made those
identical. Each check is (name, passed, detail), for `scenarios.score`."""

from __future__ import annotations

from fuzzer.model import InsideSummary, Report


def inside_checks(members: tuple[str, ...], metadata_only: tuple[str, ...], stabilized_by: str | None,
                  report: Report) -> list[tuple[str, bool, str]]:
    by_path = {a.path: a for a in report.divergent_artifacts}
    checks = []
    if members:
        checks.append(_members(members, [m for a in report.divergent_artifacts if a.inside for m in a.inside.members]))
    if metadata_only:
        inside = {p: by_path[p].inside if p in by_path else None for p in metadata_only}
        wrong = [p for p, seen in inside.items() if not (seen and seen.metadata_only)]
        detail = "; ".join(f"{p}: {_summary(inside[p])}" for p in wrong or inside)
        checks.append(("metadata_only", not wrong, detail))
    if stabilized_by:
        tested = [by_path[p].metadata_stabilizer for p in metadata_only if p in by_path]
        ok = bool(tested) and all(t and t.stable and t.variable == stabilized_by for t in tested)
        checks.append(("metadata_stabilized_by", ok, "; ".join(t.evidence if t else "not tested" for t in tested)))
    return checks


def _summary(inside: InsideSummary | None) -> str:
    return inside.summary if inside else "not looked inside"


def _members(expected: tuple[str, ...], found: list[str]) -> tuple[str, bool, str]:
    """An expected member is a path inside the artifact, or its tail (`libfoo.so`)."""
    missing = [w for w in expected if not any(m == w or m.endswith("/" + w) for m in found)]
    shown = ", ".join(found) or "none"
    return "members", not missing, f"missing {', '.join(missing)}; found {shown}" if missing else shown
