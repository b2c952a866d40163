"""What the explain stage is handed of a campaign, as plain facts: its builds so far, which
of their files count, where they ran, and how long it may go on building. The campaign
makes one `Builds` when a phase starts (`campaign.state.Campaign.builds`); nothing here
reaches back into the campaign."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fuzzer.compare import bookkeeping
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.model import RunKind
from fuzzer.observe import Manifest
from fuzzer.plan import Perturbation


@dataclass(frozen=True)
class Selection:
    """Which files of a build count, and which of them decide the verdict."""

    artifacts: tuple[str, ...]
    ignore: tuple[str, ...]
    # (compared, reference) → compared with each .buildinfo or .changes that differs only as
    # it does in every build given the reference's entry (campaign.evidence.Evidence.settled)
    settle: Callable[[Manifest, Manifest], Manifest] | None = None
    count_bookkeeping: bool = False  # --count-bookkeeping: build systems' bookkeeping counts like any file

    def everything(self, manifest: Manifest) -> Manifest:
        """Every file that can tell builds apart, intermediates included (they matter when
        walking upstream): not the ignored ones, nor the build systems' bookkeeping unless it
        counts, which localization and the step audit then never chase."""
        return manifest.select((), self.ignore + (() if self.count_bookkeeping else bookkeeping.GLOBS))

    def compared(self, manifest: Manifest) -> Manifest:
        """The compared files: bookkeeping too, which `settled` sets aside unless it counts."""
        return manifest.select((), self.ignore).select(self.artifacts)

    def judged(self, manifest: Manifest) -> Manifest:
        """The compared files that can decide the verdict."""
        return self.everything(manifest).select(self.artifacts)

    def settled(self, manifest: Manifest, reference: Manifest | None) -> Manifest:
        """The compared files as the verdict, the run groups and localization's reruns judge
        them: an upload record that differs from `reference`'s only as in every build counts
        as the reference's, so the packages alone are judged, and so does a build system's
        bookkeeping unless it counts (compare/bookkeeping.py). `reference` is read only at
        compared paths: the whole manifest or its compared part give the same."""
        compared = self.compared(manifest)
        if reference is None:
            return compared
        if not self.count_bookkeeping:
            compared = bookkeeping.settled(compared, self.compared(reference))
        return compared if self.settle is None else self.settle(compared, reference)

    def differing(self, manifest: Manifest, other: Manifest, reference: Manifest | None) -> list[str]:
        """The compared paths where `manifest` and `other` differ, both settled against
        `reference` (which may be `other` itself): what a replay or a fix proof reports."""
        return self.settled(manifest, reference).differing(self.settled(other, reference))

    def differs(self, record: RunRecord, reference: RunRecord) -> bool:
        """A failed run, or one whose compared files (settled) differ from the reference's."""
        if not record.ok:
            return True
        theirs = self.compared(reference.built)
        return self.settled(record.built, theirs).digest() != theirs.digest()


# a request for one more build of a kind: the campaign numbers each kind's builds across its phases
Requester = Callable[[RunKind, Perturbation, bool], RunRequest]


@dataclass(frozen=True)
class Builds:
    """A campaign's builds as localization, the hazard scan and the step audit see them."""

    runs: tuple[RunRecord, ...]  # by index: runs[0] is the reference
    selection: Selection
    command: str  # the build command, for the build's declared graph
    tree: str  # the one path every build ran at
    parent_outputs: bool  # what builds leave beside the tree is compared too
    compared_places: tuple[str, ...]  # where compared files live (`Workspace.compared_places`)
    logs: Path  # where replays write their logs
    deadline: float  # time.monotonic() after which no further build should run (inf: none)
    new_request: Requester
    replays_at_once: int  # replay slots
    stabilizers: tuple[str, ...]  # --stabilizers: the candidates asked for
    store: str  # for replay commands
    campaign: int

    def request(self, kind: RunKind, perturbation: Perturbation, trace: bool = False) -> RunRequest:
        return self.new_request(kind, perturbation, trace)

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()

    def differs_from_reference(self, record: RunRecord) -> bool:
        return self.selection.differs(record, self.runs[0])
