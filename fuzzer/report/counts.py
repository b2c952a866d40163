"""The verdict's lines and counts that add up: the headline's words, the closing line with
the exit code, one sentence of the drawn builds that differed, failed and matched,
and of the runs chosen rather than drawn; and what an unreproducible verdict rests on
(`Basis`): plain builds, or only builds that held a step back or shuffled make's order.

The sentence counts every perturbed build once, in one of two parts (drawn, chosen), so
its numbers never read against the verdict: an unreproducible verdict always has a build
that differed or failed in it, or says it rests on the step audit's replays.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from fuzzer import findings, hold, rates
from fuzzer.model import Basis, Reason, Report, RunStatus, RunSummary, Verdict
from fuzzer.report.folds import runs_text

# why a run was chosen rather than drawn, for each of rates.CHOSEN: one set decides which runs count
CHOSEN_AS = {Reason.REMEMBERED.value: "remembered", Reason.TARGET.value: "held target",
             Reason.CONTROL.value: "control"}
HEADLINES = {Verdict.REFERENCE_FAILED: "REFERENCE BUILD FAILED", Verdict.INCONCLUSIVE: "INCONCLUSIVE, no verdict"}
CONTRIVED = ("hold", "shuffle")  # what a plain build never does: hold a step back, shuffle make's order


@dataclass(frozen=True)
class Tally:
    """Builds that differed from the reference, failed, and matched it."""

    differed: list[int]
    failed: list[int]
    matched: list[int]

    @property
    def total(self) -> int:
        return len(self.differed) + len(self.failed) + len(self.matched)

    def text(self) -> str:
        return f"{len(self.differed)} differed from the reference, {len(self.failed)} failed, " \
               f"{len(self.matched)} matched it"


def tally(runs: list[RunSummary], reference_group: str | None) -> Tally:
    return Tally([r.index for r in runs if r.status == RunStatus.OK and r.group != reference_group],
                 [r.index for r in runs if r.status != RunStatus.OK],
                 [r.index for r in runs if r.status == RunStatus.OK and r.group == reference_group])


def perturbed(report: Report) -> list[RunSummary]:
    """The runs compared with a reference that built: none when it failed."""
    if not report.runs or report.runs[0].status != RunStatus.OK:
        return []
    return report.runs[1:]


def telling(report: Report) -> list[RunSummary]:
    """The perturbed runs that differed from the reference or failed."""
    reference = report.runs[0].group if report.runs else None
    return [r for r in perturbed(report) if r.status != RunStatus.OK or r.group != reference]


def contrived(run: RunSummary) -> list[str]:
    """What the run did that a plain build never does (`hold`, `shuffle`)."""
    return [axis for axis in CONTRIVED if axis in (run.perturbation.get("variations") or {})]


def basis(report: Report) -> Basis:
    """What an unreproducible verdict rests on: held-or-shuffled when every build that differed
    or failed held a step back or shuffled make's order; plain otherwise (the step audit's
    replays, when no build differed, are plain replays)."""
    if report.verdict != Verdict.UNREPRODUCIBLE:
        return Basis.NONE
    shown = telling(report)
    return Basis.HELD_OR_SHUFFLED if shown and all(contrived(r) for r in shown) else Basis.PLAIN


def closing_line(report: Report) -> str:
    """The verdict again, last, with what `buildfuzz run` exits with for it."""
    headline = HEADLINES.get(report.verdict, report.verdict.upper())
    if report.verdict not in set(Verdict):  # a report made by hand: no exit code to tell
        return f"verdict: {headline}"
    known = ": every finding is known, only new findings fail" if findings.all_known(report) else ""
    return f"verdict: {headline}, exit {int(report.exit_code)}{known}"


@dataclass(frozen=True)
class BuildCounts:
    """Every perturbed build once: drawn by the schedule, or chosen (and why)."""

    drawn: Tally
    chosen: Tally
    why_chosen: list[str]  # remembered, held target, control: each once
    audit_roots: int  # an unreproducible verdict no build showed rests on these steps the audit saw vary


def build_counts(report: Report) -> BuildCounts | None:
    """None with no reference to compare (it failed, or never ran)."""
    runs = perturbed(report)
    if not runs:
        return None
    reference = report.runs[0].group
    chosen = [r for r in runs if r.reason in rates.CHOSEN]
    roots = report.audit.roots if report.audit else 0
    return BuildCounts(tally(rates.drawn(runs), reference), tally(chosen, reference),
                       list(dict.fromkeys(CHOSEN_AS[r.reason] for r in chosen)),
                       roots if report.verdict == Verdict.UNREPRODUCIBLE and not telling(report) else 0)


def count_line(report: Report) -> str:
    """One sentence: the drawn builds that differed, failed and matched; the chosen runs by
    number, with why they were chosen and what they showed. "" with no reference to compare."""
    counts = build_counts(report)
    if counts is None:
        return ""
    line = f"of {counts.drawn.total} drawn builds, {counts.drawn.text()}"
    chosen = counts.chosen.differed + counts.chosen.failed + counts.chosen.matched
    if chosen:
        line += (f"; {runs_text(sorted(chosen))} {'was' if len(chosen) == 1 else 'were'} chosen rather than drawn "
                 f"({', '.join(counts.why_chosen)}), not counted: {counts.chosen.text()}")
    if counts.audit_roots:
        line += f"; the verdict rests on the step audit: {counts.audit_roots} step(s) varied when replayed alone"
    return line


def contrived_headline(report: Report) -> str:
    """For a verdict that rests on held or shuffled builds alone: what they did, and that no
    plain build failed or differed ("" otherwise)."""
    if basis(report) != Basis.HELD_OR_SHUFFLED:
        return ""
    shown = telling(report)
    plain = [r for r in perturbed(report) if not contrived(r)]
    what = " or ".join(dict.fromkeys(contrivance(r, report) for r in shown))
    return (f"only when {what} ({runs_text([r.index for r in shown])}): 0 of {len(plain)} plain builds "
            f"(neither held nor shuffled) failed or differed")


def contrivance(run: RunSummary, report: Report) -> str:
    """What a held or shuffled run did, in words (`mkdir -p obj` is held back)."""
    variations = run.perturbation.get("variations") or {}
    if "hold" in variations:
        step = held_step(variations["hold"], report)
        return f"`{step}` is held back" if step else "a traced step is held back"
    return "make's order is shuffled"


def _argvs(command: str) -> list[tuple[str, ...]]:
    """The argvs a step the report names by `command` may have run as: its words, or the shell
    line make ran with its default SHELL (a recipe's step is named by its line: trace/steps.py)."""
    try:
        words = [tuple(shlex.split(command))]
    except ValueError:
        words = []
    return [w for w in words if w] + [("/bin/sh", "-c", command)]


def held_step(value: str, report: Report) -> str:
    """The step a `hold` value names (`MS@HASH`, a hash of its argv), among the steps the
    report names; "" when none of them hashes to it."""
    wanted = value.partition("@")[2]
    named = [*(c.command for c in report.culprits), *(c.other_step or "" for c in report.culprits),
             *(s for h in report.hazards for s in (h.reader, h.writer, *h.steps))]
    for command in dict.fromkeys(c for c in named if c):
        if any(hold.argv_hash(argv) == wanted for argv in _argvs(command)):
            return command
    return next((c.command for c in report.culprits if c.argv and hold.argv_hash(tuple(c.argv)) == wanted), "")
