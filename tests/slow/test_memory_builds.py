"""The memory across campaigns: stable finding ids, new/still/fixed across campaigns of
one store, what diverged before replayed first, baselines and accepted findings.

Campaigns run on the FakeExecutor (milliseconds); one slow test does it all on a real build.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conftest import buildfuzz, make_project


pytestmark = pytest.mark.needs("2 cpus")  # the builds differ by CPU count


# --- end to end ----------------------------------------------------------------------------


def test_three_nights_on_a_real_build(tmp_path):
    """A build whose output follows nproc: found, then known (baseline) and found again at
    build 2, then fixed: a passing JUnit case under the same name."""
    source = make_project(tmp_path / "src", """
        all: out.txt
        out.txt:
            echo cpus=$$(nproc) > $@
        """)
    store, out = tmp_path / "store", tmp_path

    def night(seed: int, *extra):
        return buildfuzz("run", "--source", source, "--store", store, "--runs", "4", "--seed", seed, "--no-localize",
                         "-q", "--report-json", out / f"{seed}.json", "--junit", out / f"{seed}.xml", *extra,
                         "--", "make", "-j{jobs}")

    first = night(1)
    assert first.returncode == 1, first.stdout + first.stderr
    # a first campaign says so, instead of calling everything new since a campaign it never had
    assert json.loads((out / "1.json").read_text())["first_in_store"] is True
    assert "new since the last campaign" not in first.stdout

    second = night(2, "--baseline", out / "1.json")
    assert second.returncode == 0, second.stdout + second.stderr
    report = json.loads((out / "2.json").read_text())
    assert report["first_in_store"] is False
    assert report["verdict"] == "unreproducible" and report["runs"][1]["group"] == "B"
    assert len(report["runs"][1]["perturbation"]["cpus"]) == 1
    assert [(f["what"], f["status"], f["known"]) for f in report["findings"]] == [("out.txt", "still", True)]

    (source / "Makefile").write_text("all: out.txt\nout.txt:\n\techo fixed > $@\n")
    third = night(3)
    assert third.returncode == 0, third.stdout + third.stderr
    report = json.loads((out / "3.json").read_text())
    assert [(f["what"], f["status"]) for f in report["findings"]] == [("out.txt", "fixed")]
    cases = {c.get("name"): c for c in ET.parse(out / "3.xml").getroot().iter("testcase")}
    assert "out.txt" in cases and len(cases["out.txt"]) == 0
