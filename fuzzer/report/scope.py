"""What a verdict covers: each axis buildfuzz knows, how many runs varied it and how many
values they took, or why no run did (not asked, its tool missing here, the runs ended
first). A REPRODUCIBLE verdict says nothing of an axis no run varied."""

from __future__ import annotations

from fuzzer.axes import AXES, TARGETED, Axis
from fuzzer.model import NotTried
from fuzzer.plan import Perturbation
from fuzzer.report.model import AxisScope


def scope(asked: tuple[str, ...], perturbations: list[Perturbation]) -> list[AxisScope]:
    """`asked`: the campaign's axes (--axes and --vary); `perturbations`: its runs', the
    reference's first."""
    return [_axis_scope(axis, asked, perturbations) for axis in AXES] if perturbations else []


def _axis_scope(axis: Axis, asked: tuple[str, ...], perturbations: list[Perturbation]) -> AxisScope:
    value = axis.facets[0][1]
    reference = value(perturbations[0])
    varied = sum(value(p) != reference for p in perturbations[1:])
    values = len({value(p) for p in perturbations})
    if varied:
        return AxisScope(axis.name, axis.label, varied, values)
    problem = (axis.requires() or "") if axis.name in asked else ""  # probing costs a process: only when asked
    return AxisScope(axis.name, axis.label, 0, values, _why_not(axis, asked, problem), problem)


def _why_not(axis: Axis, asked: tuple[str, ...], problem: str) -> NotTried:
    if axis.name not in asked:
        return NotTried.NOT_ASKED
    if problem:
        return NotTried.UNAVAILABLE
    return NotTried.NO_TARGET if axis.group == TARGETED else NotTried.RUNS_ENDED
