"""What the human formats fold after the causes: variant groups, failed runs and rates,
each said once for all that share it ("11 of 19 artifacts differ in every run" instead of
one line per variant per artifact). Plain data; the formats make the prose their own way.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer import findings
from fuzzer.execute.logs import failure_summary
from fuzzer.escaping import one_line
from fuzzer.model import ArtifactFinding, Report, RunStatus, RunSummary
from fuzzer.rates import described


@dataclass(frozen=True)
class ArtifactFold:
    """Divergent artifacts whose variants fell the same way over the runs."""

    pattern: str  # "differ in every run" | "differ from the reference in runs 3, 5"
    artifacts: list[ArtifactFinding]


@dataclass(frozen=True)
class FailureFold:
    """Failed runs whose logs name the same first error (one finding)."""

    runs: list[RunSummary]
    first_error: str


def artifact_folds(report: Report) -> list[ArtifactFold]:
    """The divergent artifacts grouped by which runs differ from the reference's variant."""
    ok = [r.index for r in report.runs if r.status == RunStatus.OK]
    groups: dict[str, list[ArtifactFinding]] = {}
    for artifact in report.divergent_artifacts:
        groups.setdefault(_pattern(artifact, ok), []).append(artifact)
    return [ArtifactFold(pattern, found) for pattern, found in groups.items()]


def _pattern(artifact: ArtifactFinding, ok: list[int]) -> str:
    if artifact.variants == len(ok) > 1:
        return "differ in every run"
    odd = sorted({i for g in artifact.groups if 0 not in g.runs for i in g.runs})
    return f"differ from the reference in {runs_text(odd, 12)}" if odd else f"come in {artifact.variants} variants"


def failure_folds(report: Report) -> list[FailureFold]:
    """The failed perturbed runs, grouped by their finding (runs failing alike share one)."""
    groups: dict[str, list[RunSummary]] = {}
    for run in report.runs[1:]:
        if run.status != RunStatus.OK:
            groups.setdefault(run.finding_id or f"run {run.index}", []).append(run)
    return [FailureFold(runs, one_line(failure_summary(runs[0].log_tail, 1)[0]) if runs[0].log_tail.strip() else
                        f"{runs[0].status}, exit {runs[0].exit_code}") for runs in groups.values()]


def rate_folds(report: Report) -> list[tuple[str, list[str]]]:
    """(rate text, the findings that showed at that rate), the most shared first."""
    groups: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.status != findings.FIXED and (text := described(finding)):
            groups.setdefault(text, []).append(finding.what)
    return sorted(groups.items(), key=lambda item: -len(item[1]))


def step_variants(steps: list[str]) -> list[str]:
    """What tells each step after the first from it: its first word that differs (a stem's
    source file, `kernels/relu.k`), else the whole command."""
    if not steps:
        return []
    lead = steps[0].split()
    told = []
    for step in steps[1:]:
        words = step.split()
        told.append(next((w for i, w in enumerate(words) if i >= len(lead) or lead[i] != w), step))
    return told


def runs_text(indices: list[int], most: int | None = None) -> str:
    """`run 3`, `runs 1, 4`; past `most` numbers, the rest counted: `runs 1, 2 (+9)`."""
    cut = indices if most is None else indices[:most]
    shown = ", ".join(map(str, cut)) + (f" (+{len(indices) - len(cut)})" if len(cut) < len(indices) else "")
    return f"run {shown}" if len(indices) == 1 else f"runs {shown}"
