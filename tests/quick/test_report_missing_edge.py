"""A missing prerequisite in every format: the hazard's edge and its rule's line, and the
steps of a culprit that is one cause for several steps, each in its own field or element
of the format (a table cell, a `dt`/`dd` pair, a `name: value` line of a JUnit failure)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from msgspec import structs
from report_samples import unreproducible

from fuzzer.model import Culprit, Hazard, HazardStatus, Kind
from fuzzer.report import html, junit, markdown, text

MKDIR = "mkdir -p build/object"
COMPILES = [f"cc -c src/{name}.c -o build/object/{name}.o" for name in ("hash", "main", "util")]
EDGE, RULE = "build/object/hash.o: | build/object", "Makefile:7"


def with_shared_cause():
    """The sample report with a mkdir hazard that lacks an edge, and its one culprit for three compiles."""
    report = unreproducible()
    hazard = Hazard("mkdir-race", "build/object/", COMPILES[0], MKDIR, steps=sorted([MKDIR, *COMPILES]),
                    status=HazardStatus.MANIFEST, missing_edge=EDGE, rule=RULE)
    culprit = Culprit(COMPILES[0], ["cc"], ".", [f"build/object/{n}.o" for n in ("hash", "main")], Kind.RACE,
                      other_step=MKDIR, steps=COMPILES, evidence="3 steps share this cause")
    return structs.replace(report, hazards=[hazard, *report.hazards], culprits=[culprit, *report.culprits])


class _Cells(HTMLParser):
    """The page's table rows (cell texts) and definition lists (term → description text)."""

    def __init__(self, page: str):
        super().__init__()
        self.rows: list[list[str]] = []
        self.terms: list[dict[str, str]] = []
        self.items: list[list[str]] = []  # the <li> texts of each <ul class="steps">
        self._cell: list[str] | None = None
        self._term = self._item = None
        self._dd: list[str] | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "dl":
            self.terms.append({})
        elif tag == "dt":
            self._term = []
        elif tag == "dd":
            self._dd = []
        elif tag == "ul" and ("class", "steps") in attrs:
            self.items.append([])
        elif tag == "li" and self._dd is not None:
            self._item = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "dt":
            self._dt = "".join(self._term)
            self._term = None
        elif tag == "dd" and self._dd is not None:
            self.terms[-1][self._dt] = "".join(self._dd)
            self._dd = None
        elif tag == "li" and self._item is not None:
            self.items[-1].append("".join(self._item))
            self._item = None

    def handle_data(self, data):
        for part in (self._cell, self._term, self._dd, self._item):
            if part is not None:
                part.append(data)


def test_html_gives_the_edge_and_the_rule_their_own_cells_and_lists_the_steps_of_one_cause():
    page = _Cells(html.render(with_shared_cause()))
    header = next(r for r in page.rows if r[:2] == ["type", "file"])
    rows = [dict(zip(header, r)) for r in page.rows if len(r) == len(header) and r != header]
    hazards = {r["file"]: r for r in rows if "missing prerequisite" in r}
    assert (hazards["build/object/"]["missing prerequisite"], hazards["build/object/"]["rule"]) == (EDGE, RULE)
    assert (hazards["config.h"]["missing prerequisite"], hazards["config.h"]["rule"]) == ("", "")
    assert page.items == [COMPILES]
    shared = next(t for t in page.terms if any(k.startswith("steps sharing its cause") for k in t))
    assert shared["concurrent step"] == MKDIR


def _failures(report) -> dict[str, dict[str, list[str]]]:
    """Each failing case by name → its `name: value` lines, values per name in order."""
    root = ET.fromstring(junit.render(report).encode("utf-8"))
    cases = {}
    for case in root.iter("testcase"):
        failure = case.find("failure")
        fields: dict[str, list[str]] = {}
        for line in (failure.text or "").splitlines() if failure is not None else ():
            name, colon, value = line.partition(": ")
            if colon:
                fields.setdefault(name, []).append(value)
        cases[case.get("name")] = fields
    return cases


def test_junit_gives_the_edge_the_rule_and_the_steps_of_one_cause_as_fields():
    cases = _failures(with_shared_cause())
    mkdir = next(f for f in cases.values() if f.get("writer") == [MKDIR])
    assert (mkdir["missing prerequisite"], mkdir["rule"], mkdir["status"]) == ([EDGE], [RULE], ["manifest"])
    culprit = next(f for f in cases.values() if f.get("step"))
    assert (culprit["step"], culprit["steps sharing its cause"]) == (COMPILES, ["3"])
    plain = next(f for f in cases.values() if f.get("writer") == ["cp config.h.in config.h"])
    assert "missing prerequisite" not in plain and "rule" not in plain


def test_markdown_gives_the_edge_with_its_rule_a_column_of_the_hazards_table():
    rendered = markdown.render(with_shared_cause())
    table = rendered.split("### Hazards", 1)[1].split("\n\n", 2)[1].splitlines()
    cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in table]
    rows = [dict(zip(cells[0], r)) for r in cells[2:]]
    assert [r["Missing prerequisite"] for r in rows] == [f"{EDGE} ({RULE})", "", ""]


def test_text_lists_each_step_of_one_cause_once():
    rendered = text.render(with_shared_cause())
    line = next(l for l in rendered.splitlines() if "steps, one cause:" in l)
    assert line.split("steps, one cause: ", 1)[1].split("; ") == COMPILES
