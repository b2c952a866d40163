"""Where a traced process stands in its build's process tree: its ancestry, and the
deepest process above several (the trace's writers, the producers below a wrapper)."""

from __future__ import annotations

from fuzzer.trace.steps import BuildTrace


def lowest_common(trace: BuildTrace, indexes: list[int], root: int | None = None) -> int | None:
    """The deepest process above (or equal to) every one of `indexes`, at most `root`
    (which always is one); None without a `root` when they share none."""
    chains = [ancestry(trace, i, root) for i in indexes]
    common = set(chains[0]).intersection(*chains[1:])
    return next((i for i in chains[0] if i in common), None)


def ancestry(trace: BuildTrace, i: int, root: int | None = None) -> list[int]:
    """`i`, its parent, ... up to `root` (put last even when not above `i`) or the top, nearest first."""
    chain = [i]
    while chain[-1] != root and (parent := trace.processes[chain[-1]].parent) is not None:
        chain.append(parent)
    return chain if root is None or chain[-1] == root else [*chain, root]
