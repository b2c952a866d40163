"""What one cause's block says, the same in every human format (terminal, Markdown, HTML):
its title's parts, its steps, and its facts in order, each a name and a value. The formats
differ only in how they lay a block out and escape it, and in how they shorten a command:
the terminal and Markdown cut it to one line, the HTML folds it behind its program's name.
Every format shows a command as a packager reads it (`command_line`: pip's setup.py shim
as `python3 -u -c <code naming setup.py> bdist_wheel`); the JSON and `--verbose` keep it exact."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.escaping import one_line, quoted_commands_cut
from fuzzer.interpreters import shown_command
from fuzzer.model import Culprit, Kind, Report, Verdict
from fuzzer.report.causes import Cause, evidence_line, fix_command, stabiliser_text
from fuzzer.report.counts import contrived, contrivance
from fuzzer.report.folds import step_variants
from fuzzer.report.source_line import LINE_CHARS, line_fix_text, line_text

MEMBERS_SHOWN = 3  # an archive's members named in `reaches`; the artifact's fold lists them all


@dataclass(frozen=True)
class Fact:
    name: str  # a fixed word: step, written by, reaches, raced, missing, evidence, stabiliser, line, line fix, fix
    value: str  # one line of prose, or a whole command (`command`)
    command: bool = False

    @property
    def line(self) -> str:
        return command_line(self.value) if self.command else self.value


@dataclass(frozen=True)
class CauseBlock:
    number: int  # 1-based, of `of`
    of: int
    kind: str
    axis: str  # the axis that separates its variants, "" when none does
    cwd: str
    rule: str  # `Makefile:22`, "" unknown
    steps: list[str]  # every step once, whole, the lead culprit's first
    evidence: str  # the whole of it, commands cut: behind --verbose and folded in Markdown and HTML
    facts: list[Fact]  # in the order every format shows them, the empty ones left out

    @property
    def step_lines(self) -> list[str]:
        return [command_line(step) for step in self.steps]

    @property
    def what(self) -> str:
        """How many steps, and whose: the rule's line where make's database says it."""
        rule = f"the rule at {self.rule}" if self.rule else ""
        if len(self.steps) == 1:
            return f"one step of {rule}" if rule else "one step"
        return f"{len(self.steps)} steps of {rule or 'one rule or recipe'}"

    @property
    def alike(self) -> str:
        """The steps after the first, by what tells them apart ("" for one step)."""
        if len(self.steps) < 2:
            return ""
        return f"and {len(self.steps) - 1} more alike, differing in: {', '.join(step_variants(self.step_lines))}"


def command_line(command: str) -> str:
    """A command as one line, in the words a packager reads (an interpreter's -c code said
    by what it runs: fuzzer/interpreters.py)."""
    return one_line(shown_command(command))


def cause_block(number: int, found: list[Cause], report: Report, verbose: bool = False) -> CauseBlock:
    """`verbose`: every missing prerequisite, not the first only."""
    cause = found[number - 1]
    lead = cause.lead
    evidence = quoted_commands_cut(lead.evidence)
    written = lead.writer_process.command if lead.writer_process and lead.writer_process.command != lead.command else ""
    edges = list(dict.fromkeys(h.missing_edge + (f" (the rule at {h.rule_lines()})" if h.rule else "")
                               for h in cause.hazards if h.missing_edge))
    facts = [Fact("written by", written, command=True), Fact("reaches", _reaches(cause, report)),
             Fact("raced", lead.other_step or "", command=True),
             *(Fact("missing", edge) for edge in (edges if verbose else edges[:1])),
             Fact("evidence", _strongest(lead, report) or (evidence_line(evidence) if evidence else "")),
             Fact("stabiliser", stabiliser_text(lead)),
             Fact("line", one_line(line_text(lead.line), LINE_CHARS) if lead.line else ""),
             Fact("line fix", line_fix_text(lead.line.fix, fix_command(report)) if lead.line and lead.line.fix else ""),
             *(Fact("fix", fix) for fix in _fixes(cause, report))]
    return CauseBlock(number, len(found), lead.kind, lead.axis or "", lead.cwd, cause.rule, cause.steps, evidence,
                      [fact for fact in facts if fact.value])


def _strongest(culprit: Culprit, report: Report) -> str:
    """The strongest single fact for the culprit's kind, from its typed evidence ("" where its
    finder typed none: the prose's first clauses stand in)."""
    key, writer = culprit.key, culprit.writer_process
    if culprit.kind == Kind.INTRINSIC and key and key.replays:
        return f"replayed alone {key.replays} times with identical inputs: {key.distinct} distinct outputs"
    if culprit.kind == Kind.RACE and key and key.file:
        return f"the race on {key.file} showed" + (f" in {_run(key.run, report)}" if _run(key.run, report) else "")
    if culprit.kind == Kind.ORDER and key and key.run_order:
        return (f"from the first read that differs, {_run(key.run, report) or 'a divergent build'} read "
                f"{', '.join(key.run_order)}; the reference {', '.join(key.reference_order)}")
    if culprit.kind == Kind.BUILD_PATH and writer and writer.recorded_dir:
        return f"it recorded the directory it ran in, {writer.recorded_dir}"
    return ""


def _run(index: int | None, report: Report) -> str:
    """`run 4 (where `mkdir -p obj` is held back)`: the build that showed it, and what it did
    that a plain build never does; "" for a run the report does not hold."""
    run = next((r for r in report.runs if r.index == index), None)
    if run is None:
        return ""
    return f"run {index} " + (f"(where {contrivance(run, report)})" if contrived(run) else "(a plain build)")


def _reaches(cause: Cause, report: Report) -> str:
    """The artifact the lead's output ends up in, through what, and the others reached."""
    chains = cause.chains
    if not chains:
        return ""
    inside = next((a.inside for a in report.divergent_artifacts if a.path == chains[0][0] and a.inside), None)
    members = f" (members {', '.join(inside.members[:MEMBERS_SHOWN])})" if inside and inside.members else ""
    heads = sorted({c[0] for c in chains[1:]})
    more = f" (and {len(chains) - 1} more, into {', '.join(heads)})" if heads else ""
    return f"{' ← '.join(chains[0])}{members}{more}"


def _fixes(cause: Cause, report: Report) -> list[str]:
    if cause.fixes:
        return [f"{path or 'no patch'}" + (f" ({status})" if status else "") for path, status in cause.fixes]
    if report.verdict != Verdict.UNREPRODUCIBLE:
        return []
    return [f"none in this report: {fix_command(report)} writes and proves patches"]
