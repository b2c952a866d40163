"""The report's causes: its culprits grouped by the rule or recipe that ran them, each with
the hazards of its steps, so that every human format opens with one block per cause.

Grouping is honest or it is not done: two culprits are one cause only when they have the
same kind, axis, stabiliser set and directory, and either make's database puts both at
the same rule line, or their commands differ only in the stem (each command with its own
output's stem replaced is the same template: `gen.py kernels/%.k -o %.s`). Everything
else stays a block of its own.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from fuzzer.model import Culprit, Hazard, Kind, Report, Unfinished

STEM = "%"
EVIDENCE_CHARS = 160  # one terminal line of evidence; the whole of it is in the JSON and behind --verbose


@dataclass(frozen=True)
class Cause:
    """Culprits one rule or recipe ran (the first leads: the most likely), and their hazards."""

    culprits: tuple[Culprit, ...]
    hazards: tuple[Hazard, ...] = ()

    @property
    def lead(self) -> Culprit:
        return self.culprits[0]

    @property
    def steps(self) -> list[str]:
        """Every step of the cause, once, the lead culprit's own first."""
        return list(dict.fromkeys([self.lead.command, *(s for c in self.culprits for s in (c.steps or [c.command]))]))

    @property
    def rule(self) -> str:
        """`Makefile:22` where make's database says; the hazards' rule for their reader else."""
        return self.lead.rule or next((h.rule for h in self.hazards if h.rule), "")

    @property
    def chains(self) -> list[list[str]]:
        return [c.chain for c in self.culprits if c.chain]

    @property
    def fixes(self) -> list[tuple[str, str]]:
        """(patch path, status) of the cause's culprits and hazards that have one, once each."""
        entries: list[Culprit | Hazard] = [*self.culprits, *self.hazards]
        found = [(f.fix, f.fix_status) for f in entries if f.fix or f.fix_status]
        return list(dict.fromkeys(found))


def causes(report: Report) -> list[Cause]:
    """The report's culprits as causes, in the culprits' order (most likely first)."""
    groups: list[list[Culprit]] = []
    for culprit in report.culprits:
        group = next((g for g in groups if same_cause(g[0], culprit)), None)
        if group is None:
            groups.append([culprit])
        else:
            group.append(culprit)
    return [Cause(tuple(g), tuple(h for h in report.hazards if _touches(h, g))) for g in groups]


def rule_place(rule: str) -> tuple[str, str] | None:
    """`Makefile:22` (make's database) or `build.ninja:12` → (file, line); None without a line."""
    path, _, line = rule.rpartition(":")
    return (path, line) if path and line.isdigit() else None


def unattached_hazards(report: Report, found: list[Cause]) -> list[Hazard]:
    """The hazards no cause's steps take part in (latent ones, most often)."""
    attached = {id(h) for cause in found for h in cause.hazards}
    return [h for h in report.hazards if id(h) not in attached]


def same_cause(a: Culprit, b: Culprit) -> bool:
    """One rule or recipe ran both, with the same kind and stabilisers."""
    if (a.kind, a.axis, sorted(a.stabilized_by), a.cwd) != (b.kind, b.axis, sorted(b.stabilized_by), b.cwd):
        return False
    if a.rule and b.rule:
        return a.rule == b.rule
    return template(a) == template(b)


def template(culprit: Culprit) -> str:
    """The command with its own stem (its first output's name without directory or suffix)
    replaced: commands that differ only in the stem give the same template."""
    stem = os.path.splitext(os.path.basename(culprit.outputs[0]))[0] if culprit.outputs else ""
    return culprit.command.replace(stem, STEM) if stem else culprit.command


def _touches(hazard: Hazard, culprits: list[Culprit]) -> bool:
    commands = {s for c in culprits for s in (c.command, *c.steps)}
    return bool(commands & {hazard.reader, hazard.writer, *hazard.steps})


def evidence_line(evidence: str, limit: int = EVIDENCE_CHARS) -> str:
    """The evidence's first clauses that fit one line; cut with … when its first does not."""
    clauses = " ".join(evidence.split()).split("; ")
    line = clauses[0]
    for clause in clauses[1:]:
        if len(line) + 2 + len(clause) > limit:
            break
        line += "; " + clause
    return line if len(line) <= limit else line[:limit - 1] + "…"


def stabiliser_text(culprit: Culprit) -> str:
    """Its stabiliser set; for a step that varies alone without one, whether the search ended
    or the budget cut it; "" where a variable is not what fixes it (a race, an order)."""
    if culprit.stabilized_by:
        return " + ".join(culprit.stabilized_by)
    if culprit.unfinished == Unfinished.STABILISER_SEARCH:
        return "none confirmed before the localization budget ran out"
    return "none among the candidates tried" if culprit.kind == Kind.INTRINSIC else ""


def fix_command(report: Report) -> str:
    """`buildfuzz fix` for this campaign, in the store its replay command names."""
    words = shlex.split(report.reproduce) if report.reproduce else []
    store = words[words.index("--store") + 1] if "--store" in words[:-1] else ""
    return shlex.join(["buildfuzz", "fix", *(["--store", store] if store else []), "--campaign", str(report.campaign)])
