"""`buildfuzz bisect`: the search over plain data, the tries a rate needs, bad input, and
the truth set: a 12-commit git history made here (tests/bisect_history.py) whose commit 7
introduces a race that fails about 1 build in 4; bisect must name commit 7."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzer import bisect as bisection
from fuzzer.bisect.reproducer import Reproducer, sized_rate
from fuzzer.bisect.search import BAD, GOOD, SKIP, Judged, bisect, steps_needed
from fuzzer.plan import Perturbation
from fuzzer.stats import interval
from fuzzer.store import Store

from bisect_history import make_history
from conftest import ROOT, buildfuzz, buildfuzz_in_process


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


def test_a_measured_rate_sizes_the_tries_at_its_intervals_low_end():
    # 4 of 16 is a point estimate of 25%, yet a bug showing in 10% of builds fits that count
    # too, and passes the 22 tries sized for 25% clean one time in ten (0.9^22 = 0.098)
    rate, said = sized_rate((4, 16, 1))
    assert rate == pytest.approx(interval(4, 16)[0]) and 0.07 < rate < 0.08
    assert "4 of 16 builds" in said and "that interval's low end" in said
    tries, _ = bisection.tries_for(Reproducer("make", Path("."), Perturbation(jobs=8, cpus=(0,)), rate=rate,
                                              rate_from=said), 0.01 / 5)
    assert (1 - rate) ** tries < 0.002 < (1 - rate) ** (tries - 1) and tries > 22


# --- bad input: exit 2, one line, before any build ----------------------------------------


def _bisect(repo: Path, *args: str, store: Path | None = None, cli=buildfuzz_in_process):
    store = store or repo.parent / "store"
    return cli("bisect", "--store", str(store), *args, cwd=repo)


def _one_line(result, words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.fixture(scope="module")
def made_history(tmp_path_factory):
    repo = tmp_path_factory.mktemp("history") / "repo"
    return repo, make_history(repo)


@pytest.fixture
def history(tmp_path, made_history):
    """A copy of the one history this module makes (37 git commands), for a test to change."""
    made, hashes = made_history
    shutil.copytree(made, tmp_path / "repo", symlinks=True)
    return tmp_path / "repo", hashes


def test_a_directory_that_is_not_git_is_one_line(tmp_path):
    (tmp_path / "plain").mkdir()
    # a real process: bisect's entry point, as a user starts it
    _one_line(_bisect(tmp_path / "plain", "--good", "a", "--bad", "b", "--", "make", cli=buildfuzz),
              "not in a git repository")


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


def test_the_bench_smoke_mode_runs():
    bench = ROOT / "bench" / "bench_bisect.py"
    done = subprocess.run([sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ideal log2(11) x 22 = 76.1" in done.stdout
