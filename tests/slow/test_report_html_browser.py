"""The HTML report in a real headless Chromium: it renders, build strings stay text, and
the page logs nothing to the console (no script errors, no CSP-blocked loads).

Chromium's own --enable-logging=stderr output is the console channel: every console
message from the page, including CSP violations and uncaught exceptions, is printed as
`...:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)` (older builds print
`CONSOLE(<line>)`). No DevTools protocol needed.
"""

from __future__ import annotations

import html as entities
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from markupsafe import escape
from msgspec import structs
from report_samples import hostile_everywhere, many_axes, unreproducible

from fuzzer.report import html

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless", "--no-sandbox",  # no sandbox: CI runs as root, where Chromium refuses one
    "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--enable-logging=stderr", "--v=0",
]
CONSOLE = re.compile(r"CONSOLE[(:]|Uncaught|console\.error")
# the sandboxed diffoscope frame refusing what a hostile page asks for (scripts, loads)
FRAME_REFUSAL = re.compile(r"(Blocked script execution|Not allowed to load|Refused to).*source: about:srcdoc")
HOSTILE_AS_TEXT = "&lt;img src=x onerror=alert(1)&gt;.txt"

pytestmark = [pytest.mark.needs("chromium")]


def _chromium(tmp_path: Path, page: Path, *extra: str) -> tuple[str, str]:
    """Run Chromium on `page`; return (stdout, stderr). Its whole process group dies after."""
    argv = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *extra, page.as_uri()]
    # own session, so the group id is our pid and cleanup cannot reach anything else
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("chromium did not finish within 120 s")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # zygote/GPU helpers that outlived the browser
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, err[-2000:]
    return out, err


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


def _page(tmp_path: Path, text: str, name: str = "report.html") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_console_detection_sees_a_deliberate_error(tmp_path):
    """Canary: if Chromium changed how it logs the console, the checks below would pass vacuously."""
    page = _page(tmp_path, "<!DOCTYPE html><title>t</title><script>console.error('canary-9f3')</script>", "canary.html")
    _, err = _chromium(tmp_path, page, "--dump-dom")
    assert any("canary-9f3" in line for line in _console(err))


def test_report_renders_with_file_name_as_text(tmp_path):
    dom, err = _chromium(tmp_path, _page(tmp_path, html.render(unreproducible())), "--dump-dom")
    assert "UNREPRODUCIBLE" in dom and dom.count('<section class="cause"') == 2
    assert HOSTILE_AS_TEXT in dom
    assert "<img" not in dom.lower() and "<script" not in dom.lower()
    assert dom.count("<svg") == 2 and "<circle" in dom
    assert _console(err) == []


def test_hostile_everywhere_runs_nothing(tmp_path):
    dom, err = _chromium(tmp_path, _page(tmp_path, html.render(hostile_everywhere(unreproducible()))), "--dump-dom")
    assert dom.count(HOSTILE_AS_TEXT) > 30
    assert "<img" not in dom.lower() and "<script" not in dom.lower()
    # a CSP-blocked script or image in the page would be logged here; the only lines
    # allowed are the sandboxed diffoscope frame refusing the hostile content it was handed
    assert [line for line in _console(err) if not FRAME_REFUSAL.search(line)] == []


def test_screenshot(tmp_path):
    shot = tmp_path / "report.png"
    page = _page(tmp_path, html.render(unreproducible()))
    _, err = _chromium(tmp_path, page, "--window-size=1200,2400", f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(data[16:20], "big") == 1200  # IHDR width
    assert len(data) > 50_000  # a blank page compresses to a few KiB
    assert _console(err) == []


DIFFOSCOPE_LIKE = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" type="image/png" href="data:image/png;base64,'
    'iVBORw0KGgo="><style>.diffponct{color:#888}</style></head><body><div class="diffheader">--- a/libops.a</div>'
    '<p>diffoscope-marker</p><script>console.error("diffoscope script ran")</script></body></html>'
)


def test_embedded_diffoscope_page_is_sandboxed_and_quiet(tmp_path):
    
    report = unreproducible()
    page = tmp_path / "libops.a.html"  # diffoscope's report, a file beside the JSON report
    page.write_text(DIFFOSCOPE_LIKE)
    first = structs.replace(report.divergent_artifacts[0], diff_files=[str(page)])
    report = structs.replace(report, divergent_artifacts=[first, *report.divergent_artifacts[1:]])
    dom, err = _chromium(tmp_path, _page(tmp_path, html.render(report)), "--dump-dom")
    assert dom.count("<iframe") == 1 and "diffoscope-marker" in dom  # as the srcdoc attribute
    # the sandbox forbids scripts: the page's own script is refused, not run; nothing else is logged
    assert not any("diffoscope script ran" in line for line in _console(err))
    assert [line for line in _console(err) if not FRAME_REFUSAL.search(line)] == []


# --- seen by eye (issue 31, deliverable 8) ---------------------------------------------------

VIEWPORT = (1280, 800)  # a laptop's browser window
# run in the page (the test's copy only: the report itself allows no script): where the first
# cause is as the page opens, then every fold opened, each chart's text boxes; written into
# the page for --dump-dom to carry out
MEASURE = """<script>
const cause = document.querySelector("section.cause");
const box = cause && cause.getBoundingClientRect();
const measured = {height: innerHeight, width: innerWidth, cause: box && [box.top, box.bottom]};
document.querySelectorAll("details").forEach(d => { d.open = true; });
measured.charts = [...document.querySelectorAll("svg")].map(svg => [...svg.querySelectorAll("text")].map(t => {
  const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, t.textContent]; }));
const out = document.createElement("pre"); out.id = "measured"; out.textContent = JSON.stringify(measured);
document.body.append(out);
</script>"""
SVG_OVERLAPPING = ('<svg width="300" height="40"><text x="10" y="20">1000000007</text>'
                   '<text x="40" y="20">1557549115</text></svg>')


def _measured(tmp_path: Path, page: str) -> dict:
    """The page at 1280 px wide, measured by MEASURE (allowed to run in this copy only)."""
    policy = str(escape(html.CSP))  # as the template writes it
    scripted = page.replace(policy, policy + "; script-src &#39;unsafe-inline&#39;").replace("</body>", MEASURE + "</body>")
    assert scripted.count(MEASURE) == 1 and "script-src" in scripted
    width, height = VIEWPORT
    dom, err = _chromium(tmp_path, _page(tmp_path, scripted, "measured.html"), "--dump-dom",
                         f"--window-size={width},{height}")
    assert _console(err) == []
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.DOTALL)
    assert found, "the measuring script did not run"
    return json.loads(entities.unescape(found.group(1)))


def _overlaps(boxes: list[list]) -> list[tuple[str, str]]:
    """The pairs of text boxes that share any area (empty boxes, unrendered, count as overlapping nothing)."""
    return [(a[4], b[4]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]


def test_overlap_detection_sees_two_labels_on_each_other(tmp_path):
    """Canary: the measurement finds overlapping labels where there are some."""
    page = f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{escape(html.CSP)}"></head>' \
           f"<body>{SVG_OVERLAPPING}</body></html>"
    (chart,) = _measured(tmp_path, page)["charts"]
    assert _overlaps(chart) == [("1000000007", "1557549115")]


@pytest.mark.parametrize("make", [unreproducible, many_axes], ids=["two-causes", "many-axes"])
def test_the_first_cause_shows_without_scrolling_and_no_chart_label_overlaps_another(tmp_path, make):
    measured = _measured(tmp_path, html.render(make()))
    # headless Chromium keeps room for a browser's bars: the page gets 657 of the window's 800 px
    assert measured["width"] == VIEWPORT[0] and measured["height"] > VIEWPORT[1] * 3 / 4
    top, bottom = measured["cause"]
    assert 0 < top < bottom <= measured["height"]  # the whole first block, not only its title
    assert measured["charts"], "no chart was laid out"
    for chart in measured["charts"]:
        assert all(right > left for left, _, right, _, _ in chart)  # laid out: the folds were opened
        assert _overlaps(chart) == []


def test_screenshot_of_the_first_screen(tmp_path):
    """What a reader sees first, as a 1280 px wide image (view it by eye with --basetemp)."""
    shot = tmp_path / "first-screen.png"
    width, height = VIEWPORT
    _, err = _chromium(tmp_path, _page(tmp_path, html.render(many_axes())), f"--window-size={width},{height}",
                       f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and int.from_bytes(data[16:20], "big") == width
    assert _console(err) == []
