"""What a verdict covers: each axis buildfuzz knows, how many runs varied it and how many
values they took, or why no run did (not asked, its tool missing here, the runs ended
first). A REPRODUCIBLE verdict says nothing of an axis no run varied."""

from __future__ import annotations

from fuzzer.axes import AXES, TARGETED, Axis
from fuzzer.model import AxisScope, NotTried
from fuzzer.plan import Perturbation


def scope(asked: tuple[str, ...], perturbations: list[Perturbation], unreached: dict[str, str] | None = None,
          unread: tuple[str, ...] = ()) -> list[AxisScope]:
    """`asked`: the campaign's axes (--axes and --vary); `perturbations`: its runs', the
    reference's first; `unreached`: axis → why its runs did not reach the whole build (a
    make with no --shuffle in it), which becomes that axis's problem; `unread`: the asked
    axes none of whose readers the traced build ran."""
    return [_axis_scope(axis, asked, perturbations, (unreached or {}).get(axis.name, ""), unread)
            for axis in AXES] if perturbations else []


def _axis_scope(axis: Axis, asked: tuple[str, ...], perturbations: list[Perturbation], unreached: str,
                unread: tuple[str, ...]) -> AxisScope:
    value = axis.facets[0][1]
    reference = value(perturbations[0])
    varied = sum(value(p) != reference for p in perturbations[1:])
    values = len({value(p) for p in perturbations})
    if varied:
        return AxisScope(axis.name, axis.label, varied, values, problem=unreached)
    if axis.name in unread:
        return AxisScope(axis.name, axis.label, 0, values, NotTried.NO_READER, f"no {' or '.join(axis.read_by)} ran")
    problem = (axis.requires() or "") if axis.name in asked else ""  # probing costs a process: only when asked
    return AxisScope(axis.name, axis.label, 0, values, _why_not(axis, asked, problem), problem)


def _why_not(axis: Axis, asked: tuple[str, ...], problem: str) -> NotTried:
    if axis.name not in asked:
        return NotTried.NOT_ASKED
    if problem:
        return NotTried.UNAVAILABLE
    return NotTried.NO_TARGET if axis.group == TARGETED else NotTried.RUNS_ENDED


def scope_line(axes: list[AxisScope]) -> str:
    """One line: the axes varied, with their runs, then those not varied, grouped by why."""
    varied = [f"{s.axis} ({s.runs} run{'s' if s.runs != 1 else ''}{', but ' + s.problem if s.problem else ''})"
              for s in axes if s.not_tried == NotTried.TRIED]
    left = {why: [s for s in axes if s.not_tried == why] for why in NotTried if why != NotTried.TRIED}
    parts = [f"varied {', '.join(varied)}"] if varied else ["no axis varied"]
    if ended := left[NotTried.RUNS_ENDED]:
        parts.append(f"asked, no run drew {', '.join(s.axis for s in ended)}")
    parts += [f"{s.axis} off: {s.problem}" for s in left[NotTried.UNAVAILABLE]]
    parts += [f"{s.axis} not tried: {s.problem} in the traced build" for s in left[NotTried.NO_READER]]
    if left[NotTried.NO_TARGET]:
        parts.append("no hazard to hold a step back for")
    if asked_not := left[NotTried.NOT_ASKED]:
        parts.append(f"not asked: {', '.join(s.axis for s in asked_not)} (--vary all adds the environment)")
    return "; ".join(parts)
