"""`buildfuzz bisect`: the search over plain data, the tries a rate needs, bad input, and
the truth set: a 12-commit git history made here (tests/bisect_history.py) whose commit 7
introduces a race that fails about 1 build in 4; bisect must name commit 7."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bisect_history import BAD_COMMIT, make_history
from conftest import buildfuzz
from test_bisect import _bisect, history, made_history  # noqa: F401 (fixtures)


# --- the truth set: real builds ------------------------------------------------------------


def _untouched(repo: Path, hashes: list[str]) -> None:
    """The user's checkout as it was: its HEAD, no changed file, no build output, one worktree."""
    git = ["git", "-C", str(repo)]
    assert subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() == hashes[-1]
    assert subprocess.run(git + ["status", "--porcelain", "--ignored"], capture_output=True, text=True).stdout == ""
    assert len(subprocess.run(git + ["worktree", "list"], capture_output=True, text=True).stdout.splitlines()) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bisect_names_the_commit_that_introduced_the_race(tmp_path, seed):
    """Seed 3's history also has a commit that does not build (9, judged third): skipped, and said."""
    broken = frozenset({9}) if seed == 3 else frozenset()
    repo, hashes = tmp_path / "repo", make_history(tmp_path / "repo", broken)
    result = _bisect(repo, "--good", hashes[0], "--bad", hashes[-1], "--rate", "25%", "--seed", str(seed),
                     "--", "make -j{jobs}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"first bad commit: {hashes[BAD_COMMIT - 1][:7]}" in result.stdout
    assert "22 tries per commit" in result.stdout and "at most 115 builds" in result.stdout  # said before building
    assert "showed at try" in result.stdout and "0 of 22 tries showed it" in result.stdout
    if broken:
        assert "commit 9: notes 9: skipped: the reference build failed" in result.stdout
        assert "skipped 1 commit(s)" in result.stdout
    _untouched(repo, hashes)


def test_an_interrupted_bisection_resumes_and_leaves_nothing_behind(history):
    repo, hashes = history
    args = [sys.executable, "-m", "fuzzer", "bisect", "--store", str(repo.parent / "store"), "--good", hashes[0],
            "--bad", hashes[-1], "--rate", "25%", "--", "make -j{jobs}"]
    process = subprocess.Popen(args, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    judged = []
    for line in process.stdout:  # stop it while it builds the second commit
        judged += [line] if line.startswith("  ") else []
        if judged:
            time.sleep(1.0)
            os.kill(process.pid, signal.SIGTERM)
            break
    assert process.wait(timeout=60) == 4
    assert "the same command resumes" in process.stderr.read()
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # no build of it is left running
    _untouched(repo, hashes)
    again = subprocess.run(args, cwd=repo, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("(judged before: resumed)") == 1 and judged[0].strip() in again.stdout
    assert f"first bad commit: {hashes[BAD_COMMIT - 1][:7]}" in again.stdout


def test_a_stored_finding_is_bisected_with_its_own_reproducer_and_rate(history):
    repo, hashes = history
    store = repo.parent / "store"
    campaign = buildfuzz("run", "--source", str(repo), "--store", str(store), "--runs", "48", "--seed", "2",
                         "--no-localize", "--axes", "jobs,cpus,jitter", "--report-json", str(repo.parent / "r.json"),
                         "--", "make -j{jobs}", cwd=repo)
    assert campaign.returncode == 1, campaign.stdout + campaign.stderr
    import json
    failures = [f for f in json.loads((repo.parent / "r.json").read_text())["findings"] if f["kind"] == "failure"]
    assert failures, campaign.stdout
    finding = failures[0]
    result = _bisect(repo, "--good", hashes[0], "--bad", hashes[-1], finding["id"])
    assert result.returncode == 0, result.stdout + result.stderr
    seen, builds = finding["pooled"]["seen"], finding["pooled"]["builds"]
    assert f"it showed {finding['pooled']['text']}; sized for" in result.stdout
    assert f"{seen} of {builds}" in result.stdout
    assert f"first bad commit: {hashes[BAD_COMMIT - 1][:7]}" in result.stdout
    _untouched(repo, hashes)
