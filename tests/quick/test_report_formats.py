"""JUnit, Markdown and HTML renderings of hand-built reports: shape, content, escaping."""

from __future__ import annotations

import re
from datetime import datetime
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import structs
from report_samples import COMPILES, HOSTILE_NAME, MKDIR, RULE, hostile_everywhere, reproducible, unreproducible, with_shared_cause

from fuzzer.model import Origin
from fuzzer.report import html, junit, markdown
from fuzzer.report.cause_block import cause_block
from fuzzer.report.causes import causes
from fuzzer.report.counts import closing_line
from fuzzer.report import text as text_format

FORMATS = [junit, markdown, html]


# --- every format ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("make", [reproducible, unreproducible, lambda: hostile_everywhere(unreproducible())])
def test_every_report_renders_to_writable_utf8(fmt, make):
    text = fmt.render(make())
    assert text.endswith("\n")
    text.encode("utf-8")  # what write_outputs does; a lone surrogate would raise here


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_same_conditions_divergence_is_called_out(fmt):
    report = unreproducible()
    first = structs.replace(report.divergent_artifacts[0], same_conditions=True)
    report = structs.replace(report, divergent_artifacts=[first, *report.divergent_artifacts[1:]])
    assert "not parallelism alone" in fmt.render(report)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_timed_out_run_has_no_exit_code(fmt):
    report = unreproducible()
    runs = [structs.replace(r, status="timeout", exit_code=None) if r.index == 5 else r for r in report.runs]
    text = fmt.render(structs.replace(report, runs=runs))
    assert "timeout" in text and "None" not in text


# --- JUnit -------------------------------------------------------------------------------


def _junit(report) -> ET.Element:
    root = ET.fromstring(junit.render(report).encode("utf-8"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1 and len(root) == 1
    for element in (root, suites[0]):
        cases = suites[0].findall("testcase")
        assert int(element.get("tests")) == len(cases)
        assert int(element.get("failures")) == len(suites[0].findall("testcase/failure"))
        assert element.get("errors") == "0" and element.get("skipped") == "0"
        float(element.get("time"))
    assert {child.tag for child in suites[0]} <= {"properties", "testcase", "system-out", "system-err"}
    for case in suites[0].findall("testcase"):
        assert case.get("name") and case.get("classname", "").startswith("buildfuzz.")
        float(case.get("time"))
        assert {child.tag for child in case} <= {"failure"}
        for failure in case:
            assert failure.get("message") and failure.get("type")
    return suites[0]


def _cases(suite: ET.Element, classname: str) -> list[ET.Element]:
    return [c for c in suite.findall("testcase") if c.get("classname") == classname]


def test_junit_reproducible_has_one_passing_summary_case():
    suite = _junit(reproducible())
    (case,) = suite.findall("testcase")
    assert case.get("name") == "artifacts identical in every successful run"  # a count would rename it
    assert case.find("failure") is None
    assert suite.get("tests") == "1" and suite.get("failures") == "0"


def test_junit_unreproducible_lists_every_finding():
    suite = _junit(unreproducible())
    assert (suite.get("tests"), suite.get("failures")) == ("8", "7")
    artifacts = _cases(suite, "buildfuzz.artifacts")
    names = [c.get("name") for c in artifacts]
    assert names == ["libops.a", HOSTILE_NAME, "artifacts identical in every successful run"]
    libops = artifacts[0].find("failure")
    assert libops.get("message") == "3 variants, separated by cpus"
    assert "B: sha256:bbbb2222 in runs 2, 4" in libops.text
    assert "separated by cpus in {4} → A" in libops.text and "+ops_b.o" in libops.text
    assert artifacts[2].find("failure") is None


def test_junit_failed_run_culprits_and_hazards_are_failures():
    suite = _junit(unreproducible())
    (run,) = _cases(suite, "buildfuzz.runs")
    # named by what failed (numbers blanked), never by run number: dashboards track it across nights
    assert run.get("name") == "build failed: ops.c:N:N: fatal error: config.h: No such file or directory"
    assert run.get("time") == "1.750" and "run 5: jobs=8" in run.find("failure").text
    assert run.find("failure").get("message") == "failed, exit 2"
    assert "fatal error: config.h" in run.find("failure").text
    intrinsic, race = _cases(suite, "buildfuzz.culprits")
    assert intrinsic.get("name") == "[intrinsic] python3 gen.py ops.c (in src)"
    assert intrinsic.find("failure").get("type") == "intrinsic"
    assert "stabilised by: PYTHONHASHSEED + ASLR" in intrinsic.find("failure").text
    assert "chain: libops.a → ops.o → src/ops.c" in intrinsic.find("failure").text
    assert "concurrent step: cp config.h.in config.h" in race.find("failure").text
    hazards = _cases(suite, "buildfuzz.hazards")
    assert [h.find("failure").get("message") for h in hazards] == [
        "read-before-write on config.h", "write-write on out|put.log"]


def test_junit_hostile_strings_survive_as_text():
    suite = _junit(hostile_everywhere(unreproducible()))
    names = [c.get("name") for c in suite.findall("testcase")]
    # XML cannot carry NUL, ESC, BEL or lone surrogates: they come back as visible escapes
    expected = "a|b `x` ``` ]]> </pre><script>alert(2)</script> & \\x00\\x1b[31m\\x07 \\udcff"
    assert names[0].startswith(HOSTILE_NAME + expected)
    hostile = _junit(unreproducible()).findall("testcase/failure")[1].text
    assert "]]> </pre><script>alert(2)</script> & \\x00\\x1b[31m" in hostile


NIGHT = Origin("1.0", "builder-7", "2026-12-05T03:00:07+00:00", "2026-12-05T03:41:00+00:00")


def test_junit_suite_says_when_and_where_it_ran():
    suite = _junit(structs.replace(unreproducible(), origin=NIGHT))
    assert (suite.get("timestamp"), suite.get("hostname")) == ("2026-12-05T03:00:07", "builder-7")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert (properties["buildfuzz"], properties["ended"]) == ("1.0", NIGHT.ended)
    bare = _junit(unreproducible())  # stored before buildfuzz recorded its origin
    assert bare.get("timestamp") is None and bare.get("hostname") is None


@settings(max_examples=30)
@given(st.datetimes(datetime(1970, 1, 2), datetime(2200, 1, 1), timezones=st.timezones()), st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True))
def test_junit_timestamp_is_the_start_in_utc_and_names_do_not_change_with_the_night(started, host):
    night = Origin("1.0", host, started.isoformat(), started.isoformat())
    suite = _junit(structs.replace(unreproducible(), origin=night))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))  # as the JUnit schema has it
    assert datetime.fromisoformat(suite.get("timestamp") + "+00:00") == started.replace(microsecond=0)
    names = [(c.get("classname"), c.get("name")) for c in suite.findall("testcase")]
    assert names == [(c.get("classname"), c.get("name")) for c in _junit(unreproducible()).findall("testcase")]


def test_junit_cases_name_the_rule_file_and_line_where_known():
    report = with_shared_cause()
    cases = [c for c in _junit(report).findall("testcase") if c.find("failure") is not None]
    placed = {c.find("failure").get("message"): (c.get("file"), c.get("line")) for c in cases}
    assert placed[f"mkdir-race on {report.hazards[0].file}"] == tuple(RULE.split(":"))
    assert placed["write-write on out|put.log"] == (None, None)  # no rule known: no place claimed
    by_step = {c.get("name"): (c.get("file"), c.get("line")) for c in cases if c.get("classname") == "buildfuzz.culprits"}
    # the compiles' culprit has no rule of its own: its cause's hazard names the rule lacking the edge
    assert report.culprits[0].steps == COMPILES and report.culprits[0].other_step == MKDIR
    assert [place for name, place in by_step.items() if MKDIR in name] == [tuple(RULE.split(":"))]  # named by its race
    assert [place for name, place in by_step.items() if "gen.py" in name] == [(None, None)]


# --- Markdown ----------------------------------------------------------------------------


def _outside_code(text: str) -> str:
    """The Markdown with fenced code blocks removed: where escaping must hold."""
    kept, fence = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None and (m := re.match(r"`{3,}", stripped)):
            fence = m.group()
        elif fence is not None and re.fullmatch(r"`{%d,}" % len(fence), stripped):
            fence = None
        elif fence is None:
            kept.append(line)
    return "\n".join(kept)


def _cells(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row)) - 1


def test_markdown_reproducible_is_a_short_headline():
    text = markdown.render(reproducible())
    assert text.startswith("## buildfuzz: ✅ reproducible\n")
    assert "0 of 12 artifacts diverge" in text
    assert "|" not in text and "Replay" not in text


def test_markdown_unreproducible_has_tables_and_code_blocks():
    text = markdown.render(unreproducible())
    assert text.startswith("## buildfuzz: ❌ unreproducible\n")
    assert "| Artifact | Variants | Separated by |\n|---|---|---|\n| libops.a | 3 | cpus in {4} → A;" in text
    cause = text.split("### Cause 1 of ", 1)[1].split("<details>", 1)[0]
    assert "intrinsic" in cause and "python3 gen.py ops.c" in cause
    assert "PYTHONHASHSEED + ASLR" in cause and "libops.a ← ops.o ← src/ops.c" in cause
    # the answer first: the cause before any table, the verdict and exit code last
    assert text.index("### Cause 1 of ") < text.index("| Artifact |")
    assert text.rstrip().splitlines()[-1] == "**verdict: UNREPRODUCIBLE, exit 1**"
    assert "| 5 | jobs=8 cpus=0-3 jitter=0.40/seed=105 | failed | 2 |" in text
    assert "```sh\nbuildfuzz replay --store .buildfuzz/store.db --campaign 3 --run 1\n```" in text
    assert "```sh\ncd src && PYTHONHASHSEED=random python3 gen.py ops.c\n```" in text
    assert "```diff\n--- run 0/libops.a\n" in text


def test_markdown_escapes_pipes_and_html():
    text = markdown.render(unreproducible())
    assert "| write-write | out\\|put.log | echo a &gt;&gt; out\\|put.log | echo b &gt;&gt; out\\|put.log |" in text
    assert "| &lt;img src=x onerror=alert(1)&gt;.txt | 2 |" in text
    assert "<img" not in _outside_code(text)
    # the diff holds ``` itself, so its fence must be longer
    assert "````diff\n--- run 0/<img" in text


def test_markdown_caps_long_tables():
    report = unreproducible()
    many = [structs.replace(report.divergent_artifacts[0], path=f"obj/{i}.o") for i in range(60)]
    text = markdown.render(structs.replace(report, divergent_artifacts=many))
    assert "| obj/49.o |" in text and "obj/50.o |" not in text
    assert "… and 10 more in the JSON report." in text


def test_markdown_hostile_everywhere_keeps_structure():
    text = markdown.render(hostile_everywhere(unreproducible()))
    prose = _outside_code(text)
    assert "<img" not in prose and "<script" not in prose and "\x00" not in prose
    # <details> lines are raw HTML blocks: Markdown is not parsed there, only HTML escaping holds
    markdown_lines = [line for line in prose.splitlines() if not line.startswith("<details>")]
    assert not re.search(r"(?<!\\)`", "\n".join(markdown_lines)), "a backtick would open a code span"
    for header, width in (("| Artifact |", 3), ("| Run |", 4), ("| Type |", 5)):
        table = prose.split(header, 1)[1].split("\n\n", 1)[0]
        assert all(_cells(row) == width for row in table.splitlines()[1:])


# --- HTML --------------------------------------------------------------------------------

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "main", "footer", "h1", "h2", "h3", "p", "div", "br",
                "b", "code", "pre", "section", "ol", "ul", "li", "dl", "dt", "dd", "span", "table", "tr", "th",
                "td", "details", "summary", "svg", "g", "text", "rect", "circle"}


class _Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.data: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.data.append(data)

    def text(self) -> str:
        return "".join(self.data)

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)


def _assert_inert(text: str, frames: int = 0) -> _Page:
    """Nothing active; the only frames are sandboxed (no allow-*) diffoscope srcdoc pages,
    whose content is an attribute value, escaped like any other."""
    page = _Page(text)
    iframes = [attrs for tag, attrs in page.tags if tag == "iframe"]
    assert len(iframes) == frames
    assert all(attrs.get("sandbox", "missing") in ("", None) and set(attrs) <= {"class", "sandbox", "title", "srcdoc"}
               for attrs in iframes)
    assert {tag for tag, _ in page.tags} - {"iframe"} <= ALLOWED_TAGS
    assert not [a for _, attrs in page.tags for a in attrs if a.startswith("on")]
    outside_frames = re.sub(r'<iframe class="diffoscope" sandbox title="diffoscope report" srcdoc="[^"]*"></iframe>', "",
                            text)
    for needle in ("<script", "<link", "<img", "<iframe", "http://", "https://", "url("):
        assert needle not in outside_frames.lower()
    return page


def test_html_reproducible_page():
    text = html.render(reproducible())
    page = _assert_inert(text)
    assert text.startswith("<!DOCTYPE html>")
    assert '<header class="good"><h1>REPRODUCIBLE</h1>' in text
    assert page.count("svg") == 0 and "Reproduce" not in text
    assert page.count("tr") == 1 + 4  # runs table: header + 4 runs


def test_html_unreproducible_page():
    text = html.render(unreproducible())
    page = _assert_inert(text)
    assert '<header class="bad"><h1>UNREPRODUCIBLE</h1>' in text
    assert page.count("svg") == 2  # one chart per divergent artifact
    assert '<text x="' in text and 'class="sep">CPUs ✓</text>' in text and 'class="sep">jitter ✓</text>' in text
    words = page.text()
    for expected in ("python3 gen.py ops.c", "PYTHONHASHSEED", "libops.a",
                     "fatal error: config.h", "trace of run 4 was truncated", "+ops_b.o", "Hazards (2)",
                     "buildfuzz replay --store .buildfuzz/store.db --campaign 3 --run 1",
                     "cd src && PYTHONHASHSEED=random python3 gen.py ops.c", "jobs=8 cpus=0-3 jitter=0.40/seed=105"):
        assert expected in words


def _outline(text: str) -> list[tuple[str, str]]:
    """The page's parts in order: (tag, class) of its header, main, footer, sections, folds and lists."""
    return [(tag, attrs.get("class", "")) for tag, attrs in _Page(text).tags
            if tag in ("header", "main", "footer", "section", "details", "dl") and attrs.get("class") != "command"]


def test_html_opens_with_the_verdict_and_the_causes_folds_the_rest_and_closes_with_the_verdict():
    report = unreproducible()
    text = html.render(report)
    parts = _outline(text)
    causes = [i for i, part in enumerate(parts) if part == ("section", "cause")]
    folds = [i for i, part in enumerate(parts) if part[0] == "details" and part[1] == "fold"]
    assert parts[0] == ("header", "bad") and parts[1] == ("main", "") and parts[2] == ("dl", "opening")
    assert len(causes) == 2 and causes[0] == 3 and max(causes) < min(folds)  # every cause before any fold
    assert parts[-1] == ("footer", "bad")
    closing = text.split('<p class="closing">', 1)[1].split("</p>", 1)[0]
    assert closing == closing_line(report) and f"exit {int(report.exit_code)}" in closing
    # every fold but the runs' is closed: what is below the causes is one click away
    assert '<details open class="fold"' not in text and 'class="fold" open' not in text


def test_html_cause_blocks_carry_the_same_facts_as_the_terminal_report():
    report = unreproducible()
    found = causes(report)
    blocks = [cause_block(number, found, report) for number in range(1, len(found) + 1)]
    page = _Terms(html.render(report))
    assert page.terms[1:1 + len(blocks)] == [
        {"step": b.steps[0], **{f.name: f.value for f in b.facts}} for b in blocks]


class _Terms(HTMLParser):
    """Each <dl>'s term → description text."""

    def __init__(self, text: str):
        super().__init__()
        self.terms: list[dict[str, str]] = []
        self._open: list[str] | None = None
        self._term = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "dl":
            self.terms.append({})
        elif tag in ("dt", "dd"):
            self._open = []

    def handle_endtag(self, tag):
        if tag == "dt":
            self._term = "".join(self._open)
        elif tag == "dd":
            self.terms[-1][self._term] = "".join(self._open)
        if tag in ("dt", "dd"):
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open.append(data)


def test_html_first_campaign_and_origin():
    report = structs.replace(unreproducible(), first_in_store=True,
                             origin=Origin("9.9", "builder-7", "2026-12-05T01:00:00+00:00", "2026-12-05T01:40:00+00:00"))
    text = html.render(report)
    assert '<details class="fold" id="memory">' in text and "New since" not in text
    assert "builder-7" in _Page(text).text()


def test_html_hostile_file_name_is_text():
    text = html.render(unreproducible())
    assert "<code>&lt;img src=x onerror=alert(1)&gt;.txt</code>" in text
    assert HOSTILE_NAME in _Page(text).text()


def test_html_hostile_everywhere_stays_inert():
    report = hostile_everywhere(unreproducible())
    page = _assert_inert(html.render(report), frames=0)  # no diffoscope file in the samples
    assert page.text().count(HOSTILE_NAME) > 30


def test_html_many_divergent_artifacts_are_summarised():
    report = unreproducible()
    many = [structs.replace(report.divergent_artifacts[0], path=f"obj/{i}.o") for i in range(25)]
    text = html.render(structs.replace(report, divergent_artifacts=many))
    page = _assert_inert(text)
    assert page.count("svg") == html.DETAILED_ARTIFACTS
    assert "<h3>5 more</h3>" in text and "<code>obj/24.o</code>" in text


# --- where they go -----------------------------------------------------------------------


def test_a_report_given_as_dash_goes_to_stdout_and_the_terminal_report_to_stderr(capsys, tmp_path):
    from types import SimpleNamespace

    from fuzzer.cli.outputs import finish
    from fuzzer.config import STDOUT, Outputs
    from fuzzer.report import json_format, text

    report = unreproducible()
    with pytest.raises(SystemExit) as exit_:
        finish(SimpleNamespace(report=report, message="", exit_code=1),
               Outputs(report_json=STDOUT, markdown=tmp_path / "r.md"))
    out, err = capsys.readouterr()
    assert exit_.value.code == 1 and out == json_format.render(report)
    assert err == text.render(report) + "\n" and (tmp_path / "r.md").is_file()
    assert not (tmp_path / "-").exists()


def test_two_reports_cannot_both_go_to_stdout():
    from fuzzer.cli.outputs import check_outputs
    from fuzzer.config import STDOUT, Outputs
    from fuzzer.errors import UsageError

    with pytest.raises(UsageError):
        check_outputs(Outputs(report_json=STDOUT, junit=STDOUT))


@pytest.mark.parametrize("fmt", [text_format, markdown, html], ids=["text", "markdown", "html"])
def test_a_culprits_source_line_is_one_line_of_every_report(fmt):
    from fuzzer.model import LineCause, LineStatus, SourceLine

    line = SourceLine(LineStatus.FOUND, "/w/gen.py", 46, "Function.finalize", "enumerate(self.unnamed_labels)",
                      LineCause.SET_BY_ADDRESS, "set", ["__main__.Label"], "address", 3, ["(2, <Label#4>)",
                      "(2, <Label#9>)"], True, "", ["ASLR on", "ASLR on"], "settrace, Python 3.11", 10.0, [0.2, 0.2])
    report = unreproducible()
    report = structs.replace(report, culprits=[structs.replace(report.culprits[0], line=line), *report.culprits[1:]])
    rendered = [row for row in fmt.render(report).splitlines() if "gen.py:46" in row]
    assert len(rendered) == 1 and "set-by-address" in rendered[0] and "Label#9" in rendered[0]
