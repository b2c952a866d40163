"""The build systems' bookkeeping a campaign compared: which files differed, said in one line.

A build system's own files (fuzzer/compare/bookkeeping.py: Meson's `meson-logs/`, ninja's
`.ninja_log`, CMake's and configure's logs) differ between identical builds by design. They
are compared like every file; unless `--count-bookkeeping` counts them, a variant is settled
as the reference's and decides nothing, and the report names them here, once.
"""

from __future__ import annotations

from fuzzer.compare.bookkeeping import is_bookkeeping, tool_of
from fuzzer.model import Bookkeeping, BookkeepingFile
from fuzzer.observe import Manifest

SHOWN_IN_LINE = 6


def bookkeeping_files(selected: list[Manifest], counted: bool) -> Bookkeeping:
    """The bookkeeping files whose contents differ across the successful runs' compared
    files, `selected` (a file absent in some runs is one more variant)."""
    paths = set().union(*(m.entries for m in selected)) if selected else set()
    differed = []
    for path in sorted(p for p in paths if is_bookkeeping(p)):
        identities = {m.entries[path].identity() if path in m.entries else None for m in selected}
        if len(identities) > 1:
            differed.append(BookkeepingFile(path, tool_of(path), len(identities), len(selected)))
    return Bookkeeping(counted, differed)


def bookkeeping_line(bookkeeping: Bookkeeping) -> str:
    """One line when bookkeeping differed ("" otherwise): "build/meson-logs/meson-log.txt
    (Meson: 3 variants in 7 runs) ...: a build system's bookkeeping, not counted"."""
    files = bookkeeping.differed
    if not files:
        return ""
    shown = [f"{f.path} ({f.tool}: {f.variants} variants in {f.runs} runs)" for f in files[:SHOWN_IN_LINE]]
    more = f" and {len(files) - SHOWN_IN_LINE} more" if len(files) > SHOWN_IN_LINE else ""
    how = ("counted like any file (--count-bookkeeping)" if bookkeeping.counted
           else "not counted in the verdict (--count-bookkeeping counts it)")
    return f"{', '.join(shown)}{more} differ: a build system's own bookkeeping, {how}"
