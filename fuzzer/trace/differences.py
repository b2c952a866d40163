"""How a step's view of its inputs differed between a reference and a divergent run.

The evidence behind a root candidate: a file present in one run and missing in the other,
read before/while/after its writer ran, read in another order, or looked at in one run
only. Only workspace files count (relative paths); absolute paths are toolchain files or
temporaries private to one step.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.trace.steps import BuildTrace, Step
from fuzzer.trace.tempnames import renamed

EXISTENCE = "existence"  # the file was there in one run, missing in the other
WRITER_TIMING = "writer-timing"  # read before/while/after its writer ran, differently
READ_ORDER = "read-order"  # the same files read in a different order
ONE_RUN = "one-run"  # looked at in one run only
CO_WRITER = "co-writer"  # another step wrote the same file
RACE_EVIDENCE = frozenset({EXISTENCE, WRITER_TIMING, CO_WRITER})


@dataclass(frozen=True, slots=True)
class InputDifference:
    """One way a step's view of a file differed between the reference and divergent runs.
    Times are seconds since each run's build started: when the step first looked at the
    file (for co-writer: when it wrote it); None when it did not in that run."""

    file: str
    how: str
    other: str | None  # the other step involved (the file's writer), by command
    ref_time: float | None
    div_time: float | None
    detail: str
    # read-order: the reads from the first that differs, three at most, in each run
    ref_order: tuple[str, ...] = ()
    div_order: tuple[str, ...] = ()


def input_differences(ref: BuildTrace, div: BuildTrace, r: Step, d: Step) -> list[InputDifference]:
    out: list[InputDifference] = []
    for path in sorted(workspace_inputs(r, d) - renamed(workspace_inputs(r), workspace_inputs(d))):
        ref_t, div_t = since(ref, r.first_look(path)), since(div, d.first_look(path))
        ref_found, div_found = r.found(path), d.found(path)
        if ref_found is None or div_found is None:
            run, trace, step = ("reference", ref, r) if div_found is None else ("divergent", div, d)
            writer = other_writer(trace, step, path)
            detail = f"looked at only in the {run} run"
            other = writer.command if writer else None
            out.append(InputDifference(path, ONE_RUN, other, ref_t, div_t, detail))
        elif ref_found != div_found:
            out.append(_existence(ref, div, r, d, path, ref_found, ref_t, div_t))
        elif ref_found:
            timing = _writer_timing(ref, div, r, d, path, ref_t, div_t)
            if timing is not None:
                out.append(timing)
    order = _read_order(r, d)
    return out + ([order] if order else [])


def _existence(
    ref: BuildTrace,
    div: BuildTrace,
    r: Step,
    d: Step,
    path: str,
    ref_found: bool,
    ref_t: float | None,
    div_t: float | None,
) -> InputDifference:
    missing_in, trace, step = ("divergent", div, d) if ref_found else ("reference", ref, r)
    writer = other_writer(trace, step, path)
    detail = f"{path} was missing in the {missing_in} run and present in the other"
    if writer is not None:
        detail += f"; its writer `{writer.command}` ended at +{writer.end - trace.start:.3f}s"
    return InputDifference(path, EXISTENCE, writer.command if writer else None, ref_t, div_t, detail)


def _writer_timing(
    ref: BuildTrace, div: BuildTrace, r: Step, d: Step, path: str, ref_t: float | None, div_t: float | None
) -> InputDifference | None:
    ref_state, ref_writer = _timing(ref, r, path)
    div_state, div_writer = _timing(div, d, path)
    if ref_state == div_state:
        return None
    writer = div_writer or ref_writer
    detail = (
        f"read {path} {_describe(div_state, div_writer)} in the divergent run, "
        f"{_describe(ref_state, ref_writer)} in the reference run"
    )
    return InputDifference(path, WRITER_TIMING, writer.command if writer else None, ref_t, div_t, detail)


def _timing(trace: BuildTrace, step: Step, path: str) -> tuple[str, Step | None]:
    """Where the step's first look at `path` fell relative to the file's other writer:
    none, before, during, after."""
    writer = other_writer(trace, step, path)
    if writer is None:
        return "none", None
    t = step.first_look(path)
    if t >= writer.end:
        return "after", writer
    return ("before" if t < writer.start else "during"), writer


def _describe(state: str, writer: Step | None) -> str:
    if writer is None:
        return "with no other step writing it"
    return {
        "before": f"before `{writer.command}` started",
        "during": f"while `{writer.command}` was still running",
        "after": f"after `{writer.command}` finished",
    }[state]


def other_writer(trace: BuildTrace, step: Step, path: str) -> Step | None:
    """The last-ending other step that wrote `path`: the one whose content would count."""
    others = [w for w in trace.writers(path) if w is not step]
    return max(others, key=lambda w: w.end, default=None)


def _read_order(r: Step, d: Step) -> InputDifference | None:
    common = {p for p in r.reads if in_workspace(p)} & d.reads.keys()
    ref_order = [p for p in r.read_order if p in common]
    div_order = [p for p in d.read_order if p in common]
    if ref_order == div_order:
        return None
    first = next(i for i, (a, b) in enumerate(zip(ref_order, div_order)) if a != b)
    ref_shown, div_shown = tuple(ref_order[first : first + 3]), tuple(div_order[first : first + 3])
    detail = f"read order differs from position {first}: reference {list(ref_shown)}, divergent {list(div_shown)}"
    return InputDifference(div_order[first], READ_ORDER, None, None, None, detail, ref_shown, div_shown)


def since(trace: BuildTrace, t: float | None) -> float | None:
    return None if t is None else t - trace.start


def in_workspace(path: str) -> bool:
    return not path.startswith("/")


def workspace_inputs(*steps: Step | None) -> set[str]:
    return {p for s in steps if s is not None for p in s.inputs if in_workspace(p)}
