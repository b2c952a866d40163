"""diffoscope is optional: when on PATH it gets the variants under their real names and
writes its reports to files that the JSON report points at; it never embeds them."""

import os
import zipfile

import pytest

from fuzzer.tools import diffoscope


FAKE = """#!/bin/sh
# stands in for diffoscope: writes where --html/--text say, naming the files it was given, exit 1 (= differ)
while [ $# -gt 0 ]; do
  case "$1" in
    --html) html=$2; shift;; --text) text=$2; shift;; --max-report-size) max=$2; shift;;
    --*) ;; *) files="$files $(basename "$1")";;
  esac; shift
done
[ -n "$SLEEP" ] && sleep "$SLEEP"
echo "<html><body>fake-diffoscope max=$max$files</body></html>" > "$html"
echo "fake-diffoscope text$files" > "$text"
exit 1
"""


@pytest.fixture
def fake_diffoscope(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "diffoscope").write_text(FAKE)
    (bin_dir / "diffoscope").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def _pair(tmp_path):
    for name, text in (("a.bin", "one"), ("b.bin", "two")):
        (tmp_path / name).write_text(text)
    return str(tmp_path / "a.bin"), str(tmp_path / "b.bin")


def test_missing_diffoscope_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    a, b = _pair(tmp_path)
    assert diffoscope.write_reports(a, b, "dist/x.whl", ("run0", "run1"), tmp_path / "out", 5) == diffoscope.Reports(())
    assert not (tmp_path / "out").exists()


def test_files_keep_their_real_names_and_reports_are_bounded(fake_diffoscope, tmp_path):
    a, b = _pair(tmp_path)  # named like blobs: diffoscope must see x.whl, twice
    reports = diffoscope.write_reports(a, b, "dist/x.whl", ("run0", "run3"), tmp_path / "out", 5)
    html, text = reports.files
    assert html.endswith("dist__x.whl.html") and text.endswith("dist__x.whl.txt")
    page = open(html).read()
    assert f"max={diffoscope.MAX_REPORT_SIZE} x.whl x.whl" in page
    assert not reports.note


def test_a_slow_diffoscope_is_cut_off_with_a_note(fake_diffoscope, tmp_path, monkeypatch):
    monkeypatch.setenv("SLEEP", "5")
    a, b = _pair(tmp_path)
    reports = diffoscope.write_reports(a, b, "x.bin", ("run0", "run1"), tmp_path / "out", 0.5)
    assert "ran out of time after 0.5 s" in reports.note


@pytest.mark.needs("diffoscope")
def test_real_diffoscope_reads_a_wheel_as_a_zip(tmp_path):
    for name, stamp in (("a", (2020, 1, 1, 0, 0, 0)), ("b", (2021, 1, 1, 0, 0, 0))):
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            z.writestr(zipfile.ZipInfo("pkg/__init__.py", stamp), "x = 1\n")
    reports = diffoscope.write_reports(str(tmp_path / "a"), str(tmp_path / "b"), "dist/x.whl", ("run0", "run1"),
                                       tmp_path / "out", 60)
    text = open(next(f for f in reports.files if f.endswith(".txt"))).read()
    assert "zipinfo" in text.lower() or "zipdetails" in text.lower(), text[:2000]


def test_a_timed_out_diffoscope_leaves_no_process(fake_diffoscope, tmp_path, monkeypatch):
    monkeypatch.setenv("SLEEP", "7.25")  # a duration no other process on the machine sleeps
    a, b = _pair(tmp_path)
    diffoscope.write_reports(a, b, "x.bin", ("run0", "run1"), tmp_path / "out", 0.5)
    import psutil
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "7.25"]]
