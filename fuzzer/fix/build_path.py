"""A compile that records the random directory it ran in (kind build-path): the remedy is
`-ffile-prefix-map=OLD=.` on that compile, with OLD the directory's actual name, which only
the process that makes the directory knows. That process is a wrapper or a frontend, not a
build file's line, so there is no patch: the remedy is said, with who must apply it, and what
localization's runs of the compile with the flag showed (`remedy_status`)."""

from __future__ import annotations

from fuzzer.fix.patch import Remedy
from fuzzer.model import Culprit


def prefix_map(culprit: Culprit) -> Remedy:
    """No patch, and why: the remedy in words is `fuzzer.fix.by_hand`'s."""
    writer = culprit.writer_process
    if writer is None or not writer.recorded_dir:
        return Remedy(culprit.finding_id, "", reason="the report names no directory the step recorded")
    maker = f"`{writer.dir_made_by}`" if writer.dir_made_by else "the wrapper"
    proof = f"; the remedy itself, run by localization: {writer.remedy_status}" if writer.remedy_status else ""
    return Remedy(culprit.finding_id, f"{writer.command} with -ffile-prefix-map={writer.recorded_dir}=.",
                  reason=(f"the directory is made anew every build by {maker}, so the flag must name it where it is "
                          f"made, not in a build file{proof}"))
