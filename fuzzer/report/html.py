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
from fuzzer.escaping import is_long, one_line, program, visible
from fuzzer.execute.logs import failure_lines
from fuzzer.plan import Perturbation
from fuzzer.model import NAMED_KINDS, ArtifactFinding, Kind, Report, RunStatus, RunSummary
from fuzzer.report.audit_text import audit_lines
from fuzzer.report.cause_block import CauseBlock, cause_block, command_line
from fuzzer.report.causes import causes
from fuzzer.report.counts import closing_line
from fuzzer.report.folds import artifact_folds, failure_folds
from fuzzer.report.opening import headline, opening, runs_line
from fuzzer.report.packages import inside_lines, package_verdict

DETAILED_ARTIFACTS = 20  # a broken generated header can make hundreds diverge; the rest get a row
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c6d1f", "#555555"]  # Okabe-Ito
ROW, COL, TOP, LEFT, BOTTOM, GAP = 30, 36, 34, 40, 24, 28
# what a chart label is given: a character of the 12 px font at its widest (DejaVu Sans
# digits are 0.64 em, 7.6 px), plus room between neighbours; longer values are cut, whole on hover
CHAR_WIDTH, LABEL_GAP, LABEL_CHARS = 7.8, 10, 12
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
    """A command line, folded behind its program's name when it is too long to read, or
    behind the words a packager reads (`command_line`) where they differ from it."""

    text: str
    program: str  # the summary of the fold
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
    full: str  # the whole value where `label` is cut, "" otherwise
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
    found = causes(report)
    page = TEMPLATES.get_template("report.html.j2").render(
        report=report,
        csp=CSP,
        caption=CAPTION,
        colour=_colour,
        folded=folded,
        headline=headline(report),
        runs_line=runs_line(report),
        opening=opening(report),
        blocks=[_block(cause_block(number, found, report)) for number in range(1, len(found) + 1)],
        closing=closing_line(report),
        numbers=_numbers(report),
        phases=" · ".join(f"{name} {secs:.1f} s" for name, secs in report.phases.items()),
        memory=findings.sections(report),
        recorded=[f for f in report.findings if f.status != findings.FIXED] if report.first_in_store else None,
        first_line=findings.first_campaign_line(report),
        rates=[(f, described(f)) for f in report.findings if f.status != findings.FIXED and f.rate],
        all_known=findings.all_known(report),
        artifact_folds=artifact_folds(report),
        artifacts=[_artifact(a, runs) for a in report.divergent_artifacts[:DETAILED_ARTIFACTS]],
        rest=report.divergent_artifacts[DETAILED_ARTIFACTS:],
        hazards=[{"hazard": h, "reader": folded(h.reader), "writer": folded(h.writer)} for h in report.hazards],
        failures=failure_folds(report),
        runs=[_run(r) for r in report.runs],
        audit=audit_lines(report.audit)[1:],
        packages=[(p, f"{p.size:,} bytes", package_verdict(p)) for p in report.packages],
    )
    # control characters and lone surrogates (undecodable file names) shown as escapes
    return visible(page)


def folded(command: str, argv: list[str] | None = None) -> Folded:
    """`argv`, when given, is what the command line is made of (a writer's exec), so its
    size is counted in arguments."""
    size = f"{len(argv)} arguments" if argv else f"{len(command)} characters"
    shown = command_line(command)
    if shown != one_line(command):
        return Folded(command, shown, size, True)
    return Folded(command, program(argv[0] if argv else command), size, is_long(command))


def _numbers(report: Report) -> list[tuple[str, int, bool]]:
    """(label, count, whether a non-zero count is bad news)."""
    ok = sum(1 for r in report.runs if r.status == RunStatus.OK)
    return [("runs", len(report.runs), False), ("succeeded", ok, False), ("failed", len(report.runs) - ok, True),
            ("artifacts checked", report.artifacts_checked, False),
            ("divergent", len(report.divergent_artifacts), True),
            ("culprits", len(report.culprits), True), ("hazards", len(report.hazards), True)]


def _block(block: CauseBlock) -> dict:
    # the kind is a CSS class: a named kind only, never a build string
    return {"block": block, "css": block.kind if block.kind in NAMED_KINDS else Kind.UNKNOWN}


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

    An axis explains the divergence when each of its columns has one bubble only. Each
    column is as wide as its label, each panel at least as wide as its title, so that no two
    labels overlap (tests/slow/test_report_html_browser.py measures them in Chromium).
    """
    points = [(row, index, axes.facets(structs.convert(runs[index].perturbation, Perturbation)))
              for row, group in enumerate(artifact.groups) for index in group.runs if index in runs]
    rows = len(artifact.groups)
    labels = [{"x": LEFT - 10, "y": TOP + ROW * row + ROW / 2 + 4, "colour": _colour(row), "text": g.label}
              for row, g in enumerate(artifact.groups)]
    panels, x = [], LEFT
    for axis in axes.AXES:
        facet = axis.facets[0][0]
        values = sorted({p[2][facet] for p in points}, key=_in_order)
        if axis.group != axes.SCHEDULE and len(values) < 2:
            continue  # not varied in this campaign
        panels.append(_panel(facet, axis.label, values, points, x, rows, facet in artifact.axes))
        x += panels[-1].width + GAP
    return Chart(x, TOP + ROW * rows + BOTTOM, labels, panels)


def _panel(axis: str, title: str, values: list, points: list, x: int, rows: int, separates: bool) -> Panel:
    labels = [("on" if value else "off") if axis == "jitter" else str(value) for value in values]
    shown = [label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…" for label in labels]
    col = max(COL, round(max(map(len, shown)) * CHAR_WIDTH + LABEL_GAP))
    heading = title + (" ✓" if separates else "")
    width = max(max(len(values), 2) * col, round(len(heading) * CHAR_WIDTH + LABEL_GAP))
    left = x + (width - len(values) * col) / 2  # the columns centred under a title wider than they are
    columns = []
    for number, (value, label, full) in enumerate(zip(values, shown, labels)):
        cx = left + col * number + col / 2
        bubbles = []
        for row in range(rows):
            hits = [index for r, index, v in points if r == row and v[axis] == value]
            if hits:
                radius = min(ROW / 2 - 2, 6 + 2.5 * math.sqrt(len(hits) - 1))
                bubbles.append(Bubble(cx, TOP + ROW * row + ROW / 2, f"{radius:.1f}", _colour(row), hits))
        columns.append(Column(cx, TOP + ROW * rows + 16, label, full if full != label else "", bubbles))
    return Panel(heading, separates, x + width / 2, x, TOP, width, ROW * rows, columns)


def _in_order(value: object) -> tuple:
    """Numbers by size (jobs 2, 4, 16), anything else by its text."""
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))


def _colour(row: int) -> str:
    return PALETTE[row % len(PALETTE)]
