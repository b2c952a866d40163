"""One self-contained HTML page (`--html PATH`): opens from a CI artifact with no network.

No scripts, fonts or external resources: inline CSS and inline SVG only, and a
Content-Security-Policy that forbids everything else, so even a slip in escaping could
not run a build-supplied script. Every build string still goes through `_e`.
"""

from __future__ import annotations

import math
import re
from html import escape

from fuzzer import axes, findings
from fuzzer.plan import Perturbation
from fuzzer.escaping import visible
from fuzzer.report.model import ArtifactFinding, Culprit, Report, RunSummary

DETAILED_ARTIFACTS = 20  # a broken generated header can make hundreds diverge; the rest get a row
KINDS = {"intrinsic", "race", "order", "parallelism-level"}
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c6d1f", "#555555"]  # Okabe-Ito
ROW, COL, TOP, LEFT, BOTTOM, GAP = 30, 36, 34, 40, 24, 28
CAPTION = ("Each bubble: the runs with that axis value that produced that variant (the number says how many; "
           "hover for run numbers). ✓ marks an axis whose every value gives a single variant.")
FAVICON = re.compile(r"<link\b[^>]*\brel=[\"']?icon[^>]*>", re.IGNORECASE)
CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;margin:0;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:0 20px 40px}
header{padding:18px 20px;color:#fff}header h1{margin:0;font-size:28px;letter-spacing:.04em}
header p{margin:4px 0 0}.good{background:#1a7f37}.bad{background:#c0262d}
h2{margin:28px 0 10px;font-size:20px;border-bottom:1px solid #d0d5dd;padding-bottom:4px}
h3{margin:18px 0 6px;font-size:16px}
section.card{background:#fff;border:1px solid #d0d5dd;border-radius:6px;padding:4px 16px 12px;margin:12px 0}
.numbers{display:flex;flex-wrap:wrap;gap:10px;margin:16px 0}
.numbers div{background:#fff;border:1px solid #d0d5dd;border-radius:6px;padding:8px 14px;min-width:90px}
.numbers b{display:block;font-size:24px}.numbers .alert b{color:#c0262d}
table{border-collapse:collapse;background:#fff;margin:6px 0}
th,td{border:1px solid #d0d5dd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3}tr.failed td{background:#fdecec}
iframe.diffoscope{width:100%;height:480px;border:1px solid #d0d5dd;background:#fff}
code,pre{font:.9em/1.4 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
pre{background:#f0f2f5;border:1px solid #d0d5dd;border-radius:4px;padding:8px;margin:6px 0;
white-space:pre-wrap;overflow-wrap:anywhere}
code{overflow-wrap:anywhere}.meta{color:#4a5363}.warn{color:#9a4a00;font-weight:600}
.kind{display:inline-block;padding:0 8px;border-radius:10px;color:#fff;font-weight:600;background:#555}
.kind-intrinsic{background:#8250df}.kind-race{background:#c0262d}.kind-order{background:#9a6700}
.kind-parallelism-level{background:#0969da}
.swatch{display:inline-block;width:11px;height:11px;border-radius:6px;margin-right:6px}
.chart{overflow-x:auto}svg text{font:12px system-ui,sans-serif;fill:#1d2330}
svg .count{fill:#fff;font-weight:700;font-size:11px}
svg .sep{font-weight:700;fill:#1a7f37}.caption{color:#4a5363;font-size:13px;margin:0 0 8px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}dt{font-weight:600}dd{margin:0}
"""


def render(report: Report) -> str:
    verdict = "good" if report.reproducible else "bad"
    body = "".join([
        f'<header class="{verdict}"><h1>{_e(report.verdict.upper())}</h1><p>{_e(_headline(report))}</p></header>',
        "<main>",
        _numbers(report), _memory(report), _culprits(report), _artifacts(report), _hazards(report),
        _runs(report), _notes(report), _reproduce(report), "</main>",
    ])
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>buildfuzz: {_e(report.verdict)}</title><style>{STYLE}</style></head>"
            f"<body>{body}</body></html>\n")
    # control characters and lone surrogates (undecodable file names) shown as escapes
    return visible(page)


def _headline(report: Report) -> str:
    failed = sum(1 for r in report.runs if r.status != "ok")
    facts = [f"{len(report.divergent_artifacts)} of {report.artifacts_checked} artifacts differ between builds"]
    if failed:
        facts.append(f"{failed} of {len(report.runs)} builds failed")
    return f"{report.command} · " + " · ".join(facts)


def _numbers(report: Report) -> str:
    ok = sum(1 for r in report.runs if r.status == "ok")
    cells = [("runs", len(report.runs), False), ("succeeded", ok, False), ("failed", len(report.runs) - ok, True),
             ("artifacts checked", report.artifacts_checked, False),
             ("divergent", len(report.divergent_artifacts), True),
             ("culprits", len(report.culprits), True), ("hazards", len(report.hazards), True)]
    boxes = "".join(f'<div class="{"alert" if bad and n else ""}"><b>{n}</b>{label}</div>' for label, n, bad in cells)
    phases = " · ".join(f"{_e(name)} {secs:.1f} s" for name, secs in report.phases.items())
    meta = [f"source <code>{_e(report.source)}</code>", f"seed {report.seed}", f"campaign {report.campaign}",
            _e(report.exit_reason), "steps traced" if report.localized else "not traced", phases]
    return f'<div class="numbers">{boxes}</div><p class="meta">{" · ".join(m for m in meta if m)}</p>'


def _memory(report: Report) -> str:
    """New, fixed and known findings, against earlier campaigns of this build (fuzzer/memory.py)."""
    parts = []
    for title, found in findings.sections(report):
        rows = [[_e(f.kind), _e(f.what), _code(f.id), _e(f.first_seen)] for f in found]
        parts.append(f"<h2>{_e(title[:1].upper() + title[1:])} ({len(found)})</h2>"
                     + _table(["kind", "finding", "id", "first seen"], rows))
    if findings.all_known(report):
        parts.append("<p>Every finding is known: exit 0, only new findings fail.</p>")
    return "".join(parts)


def _culprits(report: Report) -> str:
    if not report.culprits:
        return ""
    return "<h2>Culprits (most likely first)</h2><ol>" + "".join(_culprit(c) for c in report.culprits) + "</ol>"


def _culprit(culprit: Culprit) -> str:
    kind = culprit.kind if culprit.kind in KINDS else "unknown"  # a CSS class: never a build string
    axis = f" ({_e(culprit.axis)})" if culprit.axis else ""
    writer = [" ".join(culprit.writer)] if culprit.writer else []
    facts = [("outputs", _codes(culprit.outputs, ", ")), ("stabilised by", _codes(culprit.stabilized_by, " + ")),
             ("chain", _codes(culprit.chain, " → ")), ("written by", _codes(writer, "")),
             ("concurrent step", _codes([culprit.other_step] if culprit.other_step else [], ""))]
    dl = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts if value)
    evidence = f"<pre>{_e(culprit.evidence)}</pre>" if culprit.evidence else ""
    return (f'<li><section class="card"><h3><span class="kind kind-{kind}">{_e(culprit.kind)}</span>{axis} '
            f"<code>{_e(culprit.command)}</code> in <code>{_e(culprit.cwd)}</code></h3>"
            f"<dl>{dl}</dl>{evidence}</section></li>")


def _artifacts(report: Report) -> str:
    if not report.divergent_artifacts:
        return ""
    runs = {run.index: run for run in report.runs}
    parts = [f"<h2>Divergent artifacts ({len(report.divergent_artifacts)})</h2>"]
    parts += [_artifact(a, runs) for a in report.divergent_artifacts[:DETAILED_ARTIFACTS]]
    rest = report.divergent_artifacts[DETAILED_ARTIFACTS:]
    if rest:
        rows = [[_code(a.path), str(a.variants), _e("; ".join(a.separated_by))] for a in rest]
        parts.append(f"<h3>{len(rest)} more</h3>" + _table(["artifact", "variants", "separated by"], rows))
    return "".join(parts)


def _artifact(artifact: ArtifactFinding, runs: dict[int, RunSummary]) -> str:
    rows = [[f'<span class="swatch" style="background:{_colour(i)}"></span>{_e(g.label)}', _code(g.digest),
             _e(", ".join(map(str, g.runs)))] for i, g in enumerate(artifact.groups)]
    separated = "".join(f"<li>{_e(line)}</li>" for line in artifact.separated_by)
    separated = f"<ul>{separated}</ul>" if separated else "<p>No single axis separates the variants.</p>"
    if artifact.same_conditions:
        separated += '<p class="warn">Differs between runs with identical perturbation: not parallelism alone.</p>'
    diff = ""
    if artifact.diff:
        pair = " and ".join(map(str, artifact.diff_runs))
        diff = f"<details open><summary>diff of runs {pair}</summary><pre>{_e(artifact.diff)}</pre></details>"
    if artifact.diff_html:
        # a sandboxed srcdoc frame: diffoscope's page keeps its styles, runs no script
        page = FAVICON.sub("", artifact.diff_html)  # the page's CSP (inherited) would refuse it, noisily
        diff += (f'<details><summary>diffoscope report</summary><iframe class="diffoscope" sandbox '
                 f'title="diffoscope report" srcdoc="{_e(page)}"></iframe></details>')
    return (f'<section class="card"><h3>{_code(artifact.path)}: {artifact.variants} variants</h3>'
            f'{_table(["variant", "digest", "runs"], rows)}{separated}'
            f'<div class="chart">{_chart(artifact, runs)}</div><p class="caption">{CAPTION}</p>{diff}</section>')


def _chart(artifact: ArtifactFinding, runs: dict[int, RunSummary]) -> str:
    """Per axis, a grid of axis value × variant with a bubble where runs landed.

    An axis explains the divergence when each of its columns has one bubble only.
    """
    points = [(row, index, axes.facets(Perturbation.from_json(runs[index].perturbation)))
              for row, group in enumerate(artifact.groups) for index in group.runs if index in runs]
    rows = len(artifact.groups)
    labels = "".join(f'<text x="{LEFT - 10}" y="{TOP + ROW * row + ROW / 2 + 4}" text-anchor="end" '
                     f'style="fill:{_colour(row)}">{_e(g.label)}</text>' for row, g in enumerate(artifact.groups))
    panels, x = [], LEFT
    for axis in axes.AXES:
        facet = axis.facets[0][0]
        values = sorted({p[2][facet] for p in points}, key=str)
        if axis.group != axes.SCHEDULE and len(values) < 2:
            continue  # not varied in this campaign
        panels.append(_panel(facet, axis.label, values, points, x, rows, facet in artifact.axes))
        x += max(len(values), 2) * COL + GAP
    return (f'<svg width="{x}" height="{TOP + ROW * rows + BOTTOM}" role="img" aria-label="which value of each '
            f'varied axis gave which variant of {_e(artifact.path)}">{labels}{"".join(panels)}</svg>')


def _panel(axis: str, title: str, values: list, points: list, x: int, rows: int, separates: bool) -> str:
    width = max(len(values), 2) * COL
    mark = (' class="sep"', " ✓") if separates else ("", "")
    parts = [f'<text x="{x + width / 2}" y="16" text-anchor="middle"{mark[0]}>{title}{mark[1]}</text>',
             f'<rect x="{x}" y="{TOP}" width="{width}" height="{ROW * rows}" fill="#f0f2f5" stroke="#d0d5dd"/>']
    for col, value in enumerate(values):
        cx = x + COL * col + COL / 2
        label = ("on" if value else "off") if axis == "jitter" else str(value)
        parts.append(f'<text x="{cx}" y="{TOP + ROW * rows + 16}" text-anchor="middle">{label}</text>')
        for row in range(rows):
            hits = [index for r, index, v in points if r == row and v[axis] == value]
            if hits:
                parts.append(_bubble(cx, TOP + ROW * row + ROW / 2, row, hits))
    return "".join(parts)


def _bubble(cx: float, cy: float, row: int, hits: list[int]) -> str:
    radius = min(ROW / 2 - 2, 6 + 2.5 * math.sqrt(len(hits) - 1))
    count = ""
    if len(hits) > 1:
        count = f'<text class="count" x="{cx}" y="{cy + 4}" text-anchor="middle">{len(hits)}</text>'
    return (f'<g><title>runs {", ".join(map(str, hits))}</title>'
            f'<circle cx="{cx}" cy="{cy}" r="{radius:.1f}" fill="{_colour(row)}"/>{count}</g>')


def _hazards(report: Report) -> str:
    if not report.hazards:
        return ""
    rows = [[_e(h.type), _code(h.file), _code(h.reader), _code(h.writer)] for h in report.hazards]
    return (f"<h2>Hazards ({len(report.hazards)})</h2><p>Unordered steps touching one file: latent races, even where "
            f"the outputs matched.</p>" + _table(["type", "file", "reader", "writer"], rows))


def _runs(report: Report) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("#", "perturbation", "status", "exit", "wall", "group"))
    return f"<h2>Runs ({len(report.runs)})</h2><table><tr>{head}</tr>{''.join(_run(r) for r in report.runs)}</table>"


def _run(run: RunSummary) -> str:
    css = ' class="failed"' if run.status != "ok" else ""
    perturbation = Perturbation.from_json(run.perturbation).describe() + (" (reference)" if run.index == 0 else "")
    exit_code = "–" if run.exit_code is None else str(run.exit_code)
    cells = [str(run.index), _e(perturbation), _e(run.status), exit_code, f"{run.wall_s:.1f} s", _e(run.group or "–")]
    row = f"<tr{css}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
    if css and run.log_tail:
        row += (f'<tr{css}><td></td><td colspan="5"><details open><summary>log tail</summary>'
                f"<pre>{_e(run.log_tail)}</pre></details></td></tr>")
    return row


def _notes(report: Report) -> str:
    items = "".join(f"<li>{_e(note)}</li>" for note in report.notes)
    return f"<h2>Notes</h2><ul>{items}</ul>" if items else ""


def _reproduce(report: Report) -> str:
    parts = []
    if report.reproduce and not report.reproducible:
        parts.append(f"<h3>Replay the most telling run</h3><pre>{_e(report.reproduce)}</pre>")
    if report.minimal_reproducer:
        parts.append(f"<h3>Minimal reproducer</h3><pre>{_e(report.minimal_reproducer)}</pre>")
    return "<h2>Reproduce</h2>" + "".join(parts) if parts else ""


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """`rows` hold cell HTML, already escaped by the caller."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _codes(items: list[str], sep: str) -> str:
    return sep.join(_code(item) for item in items)


def _code(text: str) -> str:
    return f"<code>{_e(text)}</code>"


def _colour(row: int) -> str:
    return PALETTE[row % len(PALETTE)]


def _e(value: object) -> str:
    return escape(str(value), quote=True)
