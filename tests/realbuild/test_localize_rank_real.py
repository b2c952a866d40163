"""Localization that finishes: roots ranked by what they explain, a budget that ends it,
known noise said in one line (issue 13). No builds: synthetic traces and files."""

from __future__ import annotations

from conftest import SCENARIOS, buildfuzz


NOISE_LINE = "intrinsic: names of temporary files; the variants of config.log differ only in names of temporary files"


# --- real builds ---------------------------------------------------------------------------

def localized(tmp_path, name: str, *options: str) -> dict:
    import json

    report = tmp_path / f"{name}.json"
    result = buildfuzz("run", "--source", SCENARIOS / "configure-tmpnames", "--store", tmp_path / name, "--runs", 3,
                       "--seed", 1, "--report-json", report, "--count-bookkeeping", *options, "--", "./configure && make -j{jobs}",
                       timeout=600)
    assert result.returncode == 1, result.stderr
    return json.loads(report.read_text())


def test_lzop_shape_names_the_deliverables_cause_first_and_the_logs_noise_last_in_one_line(tmp_path):
    report = localized(tmp_path, "ranked")
    first, *_, last = report["culprits"]
    assert "help.c" in first["command"] and first["stabilized_by"] == ["SOURCE_DATE_EPOCH"]
    assert last["command"] == "./configure" and last["kind"] == "intrinsic"
    assert last["evidence"].startswith(NOISE_LINE) and "\n" not in last["evidence"]


def test_a_spent_localization_budget_names_the_roots_left_unexplained(tmp_path):
    report = localized(tmp_path, "spent", "--localize-budget", "1s")
    assert report["culprits"] == [] and report["localized"]
    (note,) = [n for n in report["notes"] if "left unexplained" in n]
    assert "(1 s, --localize-budget) was spent: 2 root step(s) left unexplained" in note
    assert "-c help.c" in note and "`./configure` (config.log, noise)" in note
    cut = report["cut_short"]  # and the typed record says so, with what would complete them
    assert cut["unexplained_roots"] == 2 and cut["budget_s"] == 1 and cut["more_s"] > 0, cut
    assert cut["suggested_s"] >= cut["budget_s"] + cut["more_s"]
