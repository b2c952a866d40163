"""Files a traced build left outside every place buildfuzz compares.

The tree is compared, and so are the tree's parent (when buildfuzz owns it) and each
`--output` directory. A file a traced process wrote anywhere else and nothing deleted or
renamed away by the end of the build (a wheel pip built under /tmp and copied, a cache
under $HOME) was never hashed: a green verdict says nothing about it. Temporary files the
build removed again are not listed.
"""

from __future__ import annotations

from collections.abc import Iterable

from fuzzer.trace.steps import BuildTrace

LISTED = 5
HINT = "--output DIR compares a directory outside the tree that the build writes into"


def written_outside(trace: BuildTrace, compared: Iterable[str]) -> list[str]:
    """Absolute paths written, still there at the end, under none of the `compared` directories."""
    roots = tuple(root.rstrip("/") + "/" for root in compared)
    written: dict[str, float] = {}
    deleted: dict[str, float] = {}
    for process in trace.processes:
        for access in process.accesses:
            if access.path.startswith("/") and not access.path.startswith(roots):
                if access.kind == "write":
                    written[access.path] = max(written.get(access.path, access.last), access.last)
                elif access.kind == "delete":
                    deleted[access.path] = max(deleted.get(access.path, access.last), access.last)
    return sorted(path for path, t in written.items() if deleted.get(path, -1.0) < t)


def outside_note(trace: BuildTrace, compared: Iterable[str]) -> tuple[str, ...]:
    """One note naming them (the first few), with the option that would compare them."""
    paths = written_outside(trace, compared)
    if not paths:
        return ()
    named = ", ".join(paths[:LISTED]) + (f" and {len(paths) - LISTED} more" if len(paths) > LISTED else "")
    return (f"the traced build wrote {len(paths)} file(s) outside the compared places, not compared: {named} "
            f"({HINT})",)
