"""No green without evidence: a campaign that compared no file exits 2 and says why,
never REPRODUCIBLE (an empty tree, a wrong --source, a filter that left nothing)."""

import json

import pytest

from conftest import buildfuzz



def fuzz(tmp_path, source, *args):
    return buildfuzz("run", "-q", "--runs", "3", "--no-localize", "--source", source, "--store", tmp_path / "store",
                     "--report-json", tmp_path / "report.json", *args)


def test_a_tree_left_empty_is_no_verdict(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    result = fuzz(tmp_path, source, "--", "true")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no file was compared: the build left no file in its tree" in result.stderr
    assert "is --source right" in result.stderr and result.stderr.count("\n") == 1
    assert "REPRODUCIBLE" not in result.stdout
    assert not (tmp_path / "report.json").exists()


def test_filters_that_leave_nothing_are_no_verdict(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "input.txt").write_text("x")
    result = fuzz(tmp_path, source, "--ignore", "*.txt", "--", "cp input.txt out.txt")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--artifact/--ignore (and the default ignores) left out all 2 files" in result.stderr


@pytest.mark.parametrize("command, compared", [("echo built > out.txt", "out.txt"),
                                               ("echo built > ../outside.txt", "../outside.txt")])
def test_one_compared_file_is_enough(tmp_path, command, compared):
    """A file beside the tree counts too: the workspace's parent is the build's, emptied per run."""
    source = tmp_path / "src"
    source.mkdir()
    result = fuzz(tmp_path, source, "--", command)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "REPRODUCIBLE" in result.stdout
    assert json.loads((tmp_path / "report.json").read_text())["artifacts_checked"] == 1
