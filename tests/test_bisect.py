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
from fuzzer import bisect as bisection
from fuzzer.bisect.reproducer import Reproducer
from fuzzer.bisect.search import BAD, GOOD, SKIP, Judged, bisect, steps_needed
from fuzzer.plan import Perturbation
from fuzzer.store import Store

REVS = [str(commit) for commit in range(2, 13)]  # after the good commit 1, up to the bad 12


def judge_by(first_bad: int, skipped: frozenset[int] = frozenset(), log: list | None = None):
    def judge(rev: str) -> Judged:
        if log is not None:
            log.append(int(rev))
        if int(rev) in skipped:
            return Judged(rev, SKIP, 0, 0, "")
        return Judged(rev, BAD if int(rev) >= first_bad else GOOD, 1, int(int(rev) >= first_bad), "")
    return judge


@pytest.mark.parametrize("first_bad", range(2, 13))
def test_the_search_names_every_first_bad_commit_in_the_fewest_steps(first_bad):
    log = []
    found = bisect(REVS, judge_by(first_bad, log=log))
    assert found.first_bad == str(first_bad) and found.suspects == [str(first_bad)]
    assert log[0] == 12 and len(log) <= steps_needed(len(REVS)) == 5


def test_a_skipped_commit_is_stepped_around_and_said():
    found = bisect(REVS, judge_by(7, skipped=frozenset({9})))
    assert found.first_bad == "7" and [s.rev for s in found.steps if s.verdict == SKIP] == ["9"]


@pytest.mark.parametrize("skipped, suspects", [({6}, ["6", "7"]), ({5, 6}, ["5", "6", "7"])])
def test_skips_next_to_the_first_bad_commit_leave_suspects(skipped, suspects):
    """As `git bisect skip`: a commit that cannot be judged may be the first bad one."""
    found = bisect(REVS, judge_by(7, skipped=frozenset(skipped)))
    assert found.first_bad is None and found.suspects == suspects


def test_a_finding_that_does_not_show_at_bad_names_nothing():
    found = bisect(REVS, judge_by(99))
    assert found.first_bad is None and found.suspects == [] and len(found.steps) == 1


def test_the_tries_follow_the_measured_rate():
    reproducer = Reproducer("make", Path("."), Perturbation(jobs=8, cpus=(0,)), rate=0.25, rate_from="3 of 12")
    tries, why = bisection.tries_for(reproducer, 0.01 / 5)  # 1% split over 5 steps
    assert tries == 22 and 0.75 ** 22 < 0.002 < 0.75 ** 21 and "3 of 12" in why
    assert bisection.tries_for(Reproducer("make", Path("."), Perturbation(jobs=8, cpus=(0,))), 0.002)[0] == 5


# --- bad input: exit 2, one line, before any build ----------------------------------------


def _bisect(repo: Path, *args: str, store: Path | None = None):
    store = store or repo.parent / "store"
    return buildfuzz("bisect", "--store", str(store), *args, cwd=repo)


def _one_line(result, words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.fixture
def history(tmp_path):
    return tmp_path / "repo", make_history(tmp_path / "repo")


def test_a_directory_that_is_not_git_is_one_line(tmp_path):
    (tmp_path / "plain").mkdir()
    _one_line(_bisect(tmp_path / "plain", "--good", "a", "--bad", "b", "--", "make"), "not in a git repository")


def test_good_not_an_ancestor_of_bad_is_one_line(history):
    repo, hashes = history
    _one_line(_bisect(repo, "--good", hashes[5], "--bad", hashes[2], "--", "make"), "not an ancestor")
    _one_line(_bisect(repo, "--good", "nosuchrev", "--bad", hashes[2], "--", "make"), "is not a commit")


def test_a_dirty_worktree_is_one_line(history):
    repo, hashes = history
    (repo / "notes.txt").write_text("edited\n")
    _one_line(_bisect(repo, "--good", hashes[0], "--bad", hashes[-1], "--", "make"), "uncommitted changes")


def test_a_finding_that_does_not_exist_is_one_line(history):
    repo, hashes = history
    Store(repo.parent / "store", create=True).close()
    _one_line(_bisect(repo, "--good", hashes[0], "--bad", hashes[-1], "0123456789ab"), "is not in the store")
    _one_line(_bisect(repo, "--good", hashes[0], "--bad", hashes[-1], "nothex"), "is not a finding id")


# --- the truth set: real builds ------------------------------------------------------------


def _untouched(repo: Path, hashes: list[str]) -> None:
    """The user's checkout as it was: its HEAD, no changed file, no build output, one worktree."""
    git = ["git", "-C", str(repo)]
    assert subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() == hashes[-1]
    assert subprocess.run(git + ["status", "--porcelain", "--ignored"], capture_output=True, text=True).stdout == ""
    assert len(subprocess.run(git + ["worktree", "list"], capture_output=True, text=True).stdout.splitlines()) == 1


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_stored_finding_is_bisected_with_its_own_reproducer_and_rate(history):
    repo, hashes = history
    store = repo.parent / "store"
    campaign = buildfuzz("run", "--source", str(repo), "--store", str(store), "--runs", "16", "--seed", "2",
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
    assert f"({finding['pooled']['text']})" in result.stdout and f"{seen} of {builds}" in result.stdout
    assert f"first bad commit: {hashes[BAD_COMMIT - 1][:7]}" in result.stdout
    _untouched(repo, hashes)


def test_the_bench_smoke_mode_runs():
    bench = Path(__file__).resolve().parent.parent / "bench" / "bench_bisect.py"
    done = subprocess.run([sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ideal log2(11) x 22 = 76.1" in done.stdout
