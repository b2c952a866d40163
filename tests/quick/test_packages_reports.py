"""Every report format shows what the comparators saw inside a divergent artifact, the
package files compared, and the one line for upload records set aside, as the text does."""

import xml.etree.ElementTree as ET

import pytest

from fuzzer.model import (ArtifactFinding, InsideSummary, MetadataStabilizer, PackageFile, Report, RunSummary,
                          VariantSummary)
from fuzzer.report import html, json_format, junit, markdown, text

SUMMARY = "11 members identical in content; only zip entry timestamps differ"
TESTED = "the control build differed and both builds with SOURCE_DATE_EPOCH=1700000000 matched"


def _report() -> Report:
    run = lambda i: RunSummary(i, {"jobs": 1 + i, "cpus": [0]}, "ok", 0, 1.0, f"d{i}", "AB"[i > 0])
    inside = InsideSummary("zip", SUMMARY, True, identical=11, metadata=["zip entry timestamps"])
    artifact = ArtifactFinding("dist/x-1.0-py3-none-any.whl", 2,
                               [VariantSummary("A", "ab" * 32, [0]), VariantSummary("B", "cd" * 32, [1, 2])],
                               [], [], False, inside=inside,
                               metadata_stabilizer=MetadataStabilizer("SOURCE_DATE_EPOCH", True, 3, 2, TESTED))
    packages = [PackageFile("../x_1.0_amd64.buildinfo", 5123, "12" * 32, 3, 3, ["Build-Date"]),
                PackageFile("../x_1.0_amd64.deb", 53172, "34" * 32, 1, 3),
                PackageFile("dist/x-1.0-py3-none-any.whl", 9000, "ab" * 32, 2, 3)]
    return Report("make", "unreproducible", [run(0), run(1), run(2)], 0, [artifact], packages=packages,
                  artifacts_checked=5)


@pytest.mark.parametrize("fmt", [text, markdown, junit, html])
def test_each_format_shows_the_inside_line_and_the_packages(fmt):
    out = fmt.render(_report()).replace("\\", "")  # Markdown's escapes
    assert f"zip: {SUMMARY}" in out
    assert "SOURCE_DATE_EPOCH=1700000000 matched" in out
    for path in ("../x_1.0_amd64.buildinfo", "../x_1.0_amd64.deb"):
        assert path in out
    assert "identical in 3 runs" in out
    assert "differs only in Build-Date, as it always does" in out
    assert "2 variants in 3 runs" in out


def test_junit_names_the_inside_in_the_failure_message():
    root = ET.fromstring(junit.render(_report()))
    failure = next(c.find("failure") for c in root.iter("testcase") if c.find("failure") is not None)
    assert SUMMARY in failure.get("message")


def test_no_packages_no_packages_section():
    report = _report()
    bare = Report(report.command, report.verdict, report.runs, 0, [], artifacts_checked=5)
    assert "Packages compared" not in markdown.render(bare) and "Packages compared" not in html.render(bare)
    assert "packages" not in junit.render(bare)


def test_the_packages_round_trip_through_the_json_report():
    report = _report()
    again = json_format.load(json_format.render(report))
    assert again.packages == report.packages
