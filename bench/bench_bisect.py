"""Builds per bisection against the ideal: log2(n) commits judged × the tries each needs.

    python bench/bench_bisect.py              # simulated (2,000 bisections) + real (seeds 1-3)
    python bench/bench_bisect.py --smoke      # simulated, 50 bisections, no build: < 1 s (CI)
    python bench/bench_bisect.py --seeds 1 2 3 4 5

(1) Simulated: `fuzzer.bisect.search` over 11 commits after --good, the 6th of them (commit
    7 of 12) the first bad one, each try at a bad commit showing with chance 1/4; tries
    per commit from the rate (22: a wrong step below 1%/5, a wrong answer below 1%). Tries
    made (perturbed builds) against the ideal log2(11) × 22, and how often the wrong
    commit was named.
(2) Real: `buildfuzz bisect` on the 12-commit git history of tests/bisect_history.py
    (the race of commit 7 shows in about 1 build of 4; --rate 25%), one bisection per seed:
    the commit named, builds made (references + tries), wall time.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from bisect_history import BAD_COMMIT, COMMITS, RATE, make_history  # noqa: E402

from fuzzer.bisect import WRONG  # noqa: E402
from fuzzer.bisect.search import BAD, GOOD, Judged, bisect, steps_needed  # noqa: E402
from fuzzer.stats import tries_to_tell  # noqa: E402


def simulated(bisections: int) -> None:
    revs = [str(commit) for commit in range(2, COMMITS + 1)]
    step_wrong = WRONG / steps_needed(len(revs))
    tries = tries_to_tell(RATE, step_wrong)
    ideal = math.log2(len(revs)) * tries
    made, wrong = [], 0
    for seed in range(bisections):
        chance = random.Random(seed)
        spent = []

        def judge(rev: str) -> Judged:
            if int(rev) >= BAD_COMMIT:
                for attempt in range(1, tries + 1):
                    if chance.random() < RATE:
                        spent.append(attempt)
                        return Judged(rev, BAD, attempt, 1, "")
            spent.append(tries)
            return Judged(rev, GOOD, tries, 0, "")

        wrong += bisect(revs, judge).first_bad != str(BAD_COMMIT)
        made.append(sum(spent))
    print(f"(1) simulated: {bisections} bisections of {len(revs)} commits, rate {RATE:.0%}, {tries} tries per commit")
    print(f"    tries per bisection: median {statistics.median(made):.0f}, mean {statistics.mean(made):.1f}, "
          f"max {max(made)}; ideal log2({len(revs)}) x {tries} = {ideal:.1f}; "
          f"ratio median/ideal {statistics.median(made) / ideal:.2f}")
    print(f"    wrong commit named: {wrong} of {bisections} (each step wrong below {step_wrong:.1%}, "
          f"the answer below {WRONG:.0%})")


def real(seeds: list[int]) -> None:
    print(f"(2) real: buildfuzz bisect on the {COMMITS}-commit history, commit {BAD_COMMIT} bad")
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            hashes = make_history(Path(tmp) / "repo")
            start = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "fuzzer", "bisect", "--good", hashes[0], "--bad", hashes[-1],
                                   "--store", f"{tmp}/store", "--rate", "25%", "--seed", str(seed), "--",
                                   "make -j{jobs}"], cwd=f"{tmp}/repo", capture_output=True, text=True,
                                  env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
            wall = time.monotonic() - start
            named = next((l for l in done.stdout.splitlines() if l.startswith("first bad commit:")), "none named")
            builds = next((l for l in done.stdout.splitlines() if "builds made" in l), "?")
            right = "right" if hashes[BAD_COMMIT - 1] in named else "WRONG"
            print(f"    seed {seed}: {right}; {builds}; {wall:.1f} s (exit {done.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="simulated only, 50 bisections")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--bisections", type=int, default=2000)
    args = parser.parse_args()
    simulated(50 if args.smoke else args.bisections)
    if not args.smoke:
        real(args.seeds)


if __name__ == "__main__":
    main()
