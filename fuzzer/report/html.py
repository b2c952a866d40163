"""One self-contained HTML page (`--html PATH`): opens from a CI artifact with no network.

No scripts, fonts or external resources: inline CSS and inline SVG only, and a
Content-Security-Policy that forbids everything else, so even a slip in escaping could
not run a build-supplied script. The page is a Jinja2 template (`templates/`) rendered
with autoescape, so every build string is escaped by the engine, not by hand; this module
only prepares plain values: what to show, the chart's geometry, which commands to fold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from fuzzer import axes, findings, structs
from fuzzer.rates import described
from fuzzer.escaping import is_long, program, visible
from fuzzer.execute.logs import failure_lines
from fuzzer.plan import Perturbation
from fuzzer.model import NAMED_KINDS, Kind, RunStatus
from fuzzer.report.source_line import line_text
from fuzzer.report.model import ArtifactFinding, Report, RunSummary
from fuzzer.report.bookkeeping import bookkeeping_line
from fuzzer.report.packages import inside_lines, package_verdict, set_aside_line

DETAILED_ARTIFACTS = 20  # a broken generated header can make hundreds diverge; the rest get a row
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c6d1f", "#555555"]  # Okabe-Ito
ROW, COL, TOP, LEFT, BOTTOM, GAP = 30, 36, 34, 40, 24, 28
CAPTION = ("Each bubble: the runs with that axis value that produced that variant (the number says how many; "
           "hover for run numbers). ✓ marks an axis whose every value gives a single variant.")
FAVICON = re.compile(r"<link\b[^>]*\brel=[\"']?icon[^>]*>", re.IGNORECASE)
CSP = "default-src 'none'; style-src 'unsafe-inline'"
TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("fuzzer.report", "templates"),
    autoescape=True,  # the whole page, .j2 included: nothing from the build is ever markup
    undefined=jinja2.StrictUndefined,  # a misspelt name is an error, not an empty cell
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


@dataclass(frozen=True)
class Folded:
    """A command line, folded behind its program's name when it is too long to read."""

    text: str
    program: str
    size: str  # "40 arguments", "5123 characters"
    long: bool


@dataclass(frozen=True)
class Bubble:
    x: float
    y: float
    radius: str
    colour: str
    hits: list[int]


@dataclass(frozen=True)
class Column:
    """One value of an axis: its label under the panel, and a bubble per variant it gave."""

    x: float
    y: int
    label: str
    bubbles: list[Bubble]


@dataclass(frozen=True)
class Panel:
    title: str
    separates: bool
    title_x: float
    x: int
    y: int
    width: int
    height: int
    columns: list[Column]


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    labels: list[dict]
    panels: list[Panel]


def render(report: Report) -> str:
    runs = {run.index: run for run in report.runs}
    page = TEMPLATES.get_template("report.html.j2").render(
        report=report,
        csp=CSP,
        caption=CAPTION,
        colour=_colour,
        headline=_headline(report),
        numbers=_numbers(report),
        phases=" · ".join(f"{name} {secs:.1f} s" for name, secs in report.phases.items()),
        memory=findings.sections(report),
        rates=[(f, described(f)) for f in report.findings if f.status != findings.FIXED and f.rate],
        all_known=findings.all_known(report),
        culprits=[_culprit(c) for c in report.culprits],
        artifacts=[_artifact(a, runs) for a in report.divergent_artifacts[:DETAILED_ARTIFACTS]],
        rest=report.divergent_artifacts[DETAILED_ARTIFACTS:],
        hazards=[{"hazard": h, "reader": folded(h.reader), "writer": folded(h.writer)} for h in report.hazards],
        runs=[_run(r) for r in report.runs],
        packages=[(p, f"{p.size:,} bytes", package_verdict(p)) for p in report.packages],
        set_aside=set_aside_line(report.packages),
        bookkeeping=bookkeeping_line(report.bookkeeping),
    )
    # control characters and lone surrogates (undecodable file names) shown as escapes
    return visible(page)


def folded(command: str, argv: list[str] | None = None) -> Folded:
    """`argv`, when given, is what the command line is made of (a writer's exec), so its
    size is counted in arguments."""
    size = f"{len(argv)} arguments" if argv else f"{len(command)} characters"
    return Folded(command, program(argv[0] if argv else command), size, is_long(command))


def _headline(report: Report) -> str:
    failed = sum(1 for r in report.runs if r.status != RunStatus.OK)
    facts = [f"{len(report.divergent_artifacts)} of {report.artifacts_checked} artifacts differ between builds"]
    if failed:
        facts.append(f"{failed} of {len(report.runs)} builds failed")
    return f"{report.command} · " + " · ".join(facts)


def _numbers(report: Report) -> list[tuple[str, int, bool]]:
    """(label, count, whether a non-zero count is bad news)."""
    ok = sum(1 for r in report.runs if r.status == RunStatus.OK)
    return [("runs", len(report.runs), False), ("succeeded", ok, False), ("failed", len(report.runs) - ok, True),
            ("artifacts checked", report.artifacts_checked, False),
            ("divergent", len(report.divergent_artifacts), True),
            ("culprits", len(report.culprits), True), ("hazards", len(report.hazards), True)]


def _culprit(culprit) -> dict:
    return {
        "culprit": culprit,
        "css": culprit.kind if culprit.kind in NAMED_KINDS else Kind.UNKNOWN,  # a CSS class: never a build string
        "command": folded(culprit.command),
        "writer": folded(" ".join(culprit.writer), culprit.writer) if culprit.writer else None,
        "other": folded(culprit.other_step) if culprit.other_step else None,
        "steps": [folded(step) for step in culprit.steps],  # one cause, several steps (fuzzer/explain/shared_cause.py)
        "line": line_text(culprit.line) if culprit.line else "",  # its first divergent source line (explain/lines/)
    }


def _artifact(artifact: ArtifactFinding, runs: dict[int, RunSummary]) -> dict:
    # diffoscope's page goes in a sandboxed srcdoc frame: it keeps its styles, runs no script;
    # its favicon link is dropped, which the page's CSP (inherited) would refuse, noisily
    diffoscope = FAVICON.sub("", _diffoscope_page(artifact))
    return {"artifact": artifact, "chart": _chart(artifact, runs), "diffoscope": diffoscope,
            "inside": inside_lines(artifact)}


def _run(run: RunSummary) -> dict:
    perturbation = structs.convert(run.perturbation, Perturbation).describe() + (" (reference)" if run.index == 0 else "")
    errors = failure_lines(run.log_tail) if run.status != RunStatus.OK else []
    return {"run": run, "perturbation": perturbation, "errors": errors}


def _diffoscope_page(artifact: ArtifactFinding) -> str:
    """diffoscope's page, from its file beside the JSON report: this page stays self-contained."""
    path = next((p for p in artifact.diff_files if p.endswith(".html")), None)
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return ""


def _chart(artifact: ArtifactFinding, runs: dict[int, RunSummary]) -> Chart:
    """Per axis, a grid of axis value × variant with a bubble where runs landed.

    An axis explains the divergence when each of its columns has one bubble only.
    """
    points = [(row, index, axes.facets(structs.convert(runs[index].perturbation, Perturbation)))
              for row, group in enumerate(artifact.groups) for index in group.runs if index in runs]
    rows = len(artifact.groups)
    labels = [{"x": LEFT - 10, "y": TOP + ROW * row + ROW / 2 + 4, "colour": _colour(row), "text": g.label}
              for row, g in enumerate(artifact.groups)]
    panels, x = [], LEFT
    for axis in axes.AXES:
        facet = axis.facets[0][0]
        values = sorted({p[2][facet] for p in points}, key=str)
        if axis.group != axes.SCHEDULE and len(values) < 2:
            continue  # not varied in this campaign
        panels.append(_panel(facet, axis.label, values, points, x, rows, facet in artifact.axes))
        x += max(len(values), 2) * COL + GAP
    return Chart(x, TOP + ROW * rows + BOTTOM, labels, panels)


def _panel(axis: str, title: str, values: list, points: list, x: int, rows: int, separates: bool) -> Panel:
    width = max(len(values), 2) * COL
    columns = []
    for col, value in enumerate(values):
        cx = x + COL * col + COL / 2
        label = ("on" if value else "off") if axis == "jitter" else str(value)
        bubbles = []
        for row in range(rows):
            hits = [index for r, index, v in points if r == row and v[axis] == value]
            if hits:
                radius = min(ROW / 2 - 2, 6 + 2.5 * math.sqrt(len(hits) - 1))
                bubbles.append(Bubble(cx, TOP + ROW * row + ROW / 2, f"{radius:.1f}", _colour(row), hits))
        columns.append(Column(cx, TOP + ROW * rows + 16, label, bubbles))
    return Panel(title, separates, x + width / 2, x, TOP, width, ROW * rows, columns)


def _colour(row: int) -> str:
    return PALETTE[row % len(PALETTE)]
