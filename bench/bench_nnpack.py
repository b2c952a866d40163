"""Benchmark the seed at full size: NNPACK's own CMake + Ninja build, as PyTorch builds it
(x86-64 backend: all 13 PeachPy kernels, chained by DEPENDS, then the C sources, into
libnnpack.a), fuzzed by `buildfuzz run --check-steps all` (issue 30, item 8).

    python bench/bench_nnpack.py --sources DIR     # DIR holds NNPACK, PeachPy, FP16, FXdiv,
                                                   # psimd, pthreadpool and cpuinfo checkouts
    python bench/bench_nnpack.py --fetch           # clone them from GitHub first (network)
    python bench/bench_nnpack.py --sources DIR --budget 45m   # the overnight run
    python bench/bench_nnpack.py --smoke           # a stand-in, offline (CI; ~1 min)
    python bench/bench_nnpack.py --smoke --against main   # and buildfuzz as of main on the same tree

Offline once the sources are here: NNPACK's CMake is pointed at each checkout through its
*_SOURCE_DIR variables, so it downloads nothing. PeachPy needs `six` and `Opcodes`: the bench
makes a venv in its work directory and pip-installs them there (from the package index, the
only network it uses without --fetch), then generates PeachPy's instruction classes in a copy
of PeachPy (`setup.py generate`). FP16 is taken at PyTorch's pin (4dfe081): newer FP16 dropped
the PeachPy modules (`fp16.avx`) the kernels import. Nothing of NNPACK or PeachPy is copied
into this repository.

What it prints: for each kernel, whether its object differed between builds, whether a culprit
was named for it, its kind, stabilisers and what the budget left unfinished, and its audit row
(replays alone, and for a stable one the bound k identical replays give: 1 - 0.05^(1/k) at
95%); then the cost: builds, the audit's and localization's time in builds' time (the
untraced reference's wall time), and against the limit: the replays the claims need (5 for a
step called stable; for one that varies, the two different outputs that show it plus a
stabiliser search) × each step's measured time ÷ the replay slots. `--against REV` runs
buildfuzz as of git revision REV too (its files from `git archive`, in the temporary
directory), on the same tree, first, and prints its table before this checkout's and the
two costs side by side. `--smoke` builds a tiny stand-in instead: a CMake + Ninja
project with one stable and one PeachPy-like generator (the audit-generator-chain scenario's
gen.py, varying unless both ASLR and the hash seed are fixed) and prints the same table.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "audit-generator-chain"
sys.path[:0] = [str(ROOT), str(SCENARIO)]

from fuzzer.execute.step_replay import REPLAYS  # noqa: E402
from fuzzer.explain.stabilizers import candidates, full_search_replays  # noqa: E402
from fuzzer.stats import percent_above, upper_bound_zero  # noqa: E402
from make_project import cmakelists  # noqa: E402

REPOS = {"NNPACK": "Maratyszcza/NNPACK", "PeachPy": "Maratyszcza/PeachPy", "FP16": "Maratyszcza/FP16",
         "FXdiv": "Maratyszcza/FXdiv", "psimd": "Maratyszcza/psimd", "pthreadpool": "Maratyszcza/pthreadpool",
         "cpuinfo": "pytorch/cpuinfo"}
FP16_PIN = "4dfe081cf6bcd15db339cf2680b9281b8451eeb3"  # PyTorch's third_party/FP16: still has fp16/avx.py
KERNELS = [f"src/x86_64-fma/{k}.py" for k in (
    "2d-fourier-8x8", "2d-fourier-16x16", "2d-winograd-8x8-3x3", "blas/s8gemm", "blas/c8gemm", "blas/s4c6gemm",
    "blas/conv1x1", "blas/sgemm", "max-pooling", "relu", "softmax", "blas/sdotxf", "blas/shdotxf")]
SMOKE_MODES, SMOKE_SECONDS = ["stable", "joint"], [0.05, 0.1]
DECIDING = 2  # replays that show a step varies: two different outputs


def fetch(into: Path) -> Path:
    """Clone each repository (network: only here, only with --fetch)."""
    into.mkdir(parents=True, exist_ok=True)
    for name, repo in REPOS.items():
        if not (into / name).exists():
            subprocess.run(["git", "clone", "-q", f"https://github.com/{repo}", str(into / name)], check=True)
    return into


def prepare(sources: Path, work: Path) -> tuple[Path, str]:
    """NNPACK's tree to fuzz and the build command, every dependency a local directory."""
    missing = [n for n in REPOS if not (sources / n).is_dir()]
    if missing:
        sys.exit(f"bench_nnpack: {sources} has no {', '.join(missing)} (--fetch clones them)")
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "six", "Opcodes"], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import six, os; print(os.path.dirname(six.__file__))"], check=True,
                          capture_output=True, text=True).stdout.strip()
    peachpy = work / "peachpy"
    if not (peachpy / "peachpy" / "x86_64" / "avx.py").exists():
        shutil.rmtree(peachpy, ignore_errors=True)
        shutil.copytree(sources / "PeachPy", peachpy, ignore=shutil.ignore_patterns(".git"))
        subprocess.run([python, "setup.py", "-q", "generate"], cwd=peachpy, check=True, capture_output=True)
    fp16 = sources / "FP16"
    if not (fp16 / "include" / "fp16" / "avx.py").exists():
        fp16 = work / "FP16"
        if not fp16.exists():
            subprocess.run(["git", "clone", "-q", str(sources / "FP16"), str(fp16)], check=True)
            subprocess.run(["git", "-C", str(fp16), "checkout", "-q", FP16_PIN], check=True)
    tree = work / "nnpack"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(sources / "NNPACK", tree, ignore=shutil.ignore_patterns(".git"))
    defines = {"CMAKE_BUILD_TYPE": "Release", "NNPACK_LIBRARY_TYPE": "static", "NNPACK_BUILD_TESTS": "OFF",
               "NNPACK_BUILD_BENCHMARKS": "OFF", "PYTHON_EXECUTABLE": python, "PYTHON_SIX_SOURCE_DIR": site,
               "PYTHON_PEACHPY_SOURCE_DIR": str(peachpy), "FP16_SOURCE_DIR": str(fp16),
               "CPUINFO_SOURCE_DIR": str(sources / "cpuinfo"), "FXDIV_SOURCE_DIR": str(sources / "FXdiv"),
               "PSIMD_SOURCE_DIR": str(sources / "psimd"), "PTHREADPOOL_SOURCE_DIR": str(sources / "pthreadpool")}
    flags = " ".join(shlex.quote(f"-D{k}={v}") for k, v in defines.items())
    return tree, f"cmake -S . -B build -G Ninja {flags} >/dev/null && cmake --build build -j {{jobs}}"


def stand_in(work: Path) -> tuple[Path, str]:
    """The smoke mode's tree: one stable and one PeachPy-like generator, chained as NNPACK's."""
    tree = work / "stand-in"
    tree.mkdir(parents=True)
    shutil.copy(SCENARIO / "gen.py", tree / "gen.py")
    (tree / "CMakeLists.txt").write_text(cmakelists(len(SMOKE_MODES), SMOKE_MODES, SMOKE_SECONDS))
    return tree, "cmake -S . -B build -G Ninja >/dev/null && cmake --build build -j {jobs}"


def exported(rev: str, into: Path) -> Path:
    """buildfuzz's files as of git revision `rev`, in `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=False)
    if archive.returncode:
        sys.exit(f"bench_nnpack: no git revision {rev}: {archive.stderr.decode()[:200]}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def fuzz(tree: Path, command: str, store: Path, report: Path, runs: int, budget: str | None,
         root: Path = ROOT) -> float:
    """`root`: the buildfuzz to run (this checkout's, or a revision's exported)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fuzzer", "run", "--source", str(tree), "--store", str(store),
                           "--runs", str(runs), "--seed", "1", "--check-steps", "all", "--report-json", str(report),
                           "--quiet", *(["--budget", budget] if budget else []), "--", command],
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not report.exists():
        sys.exit(f"bench_nnpack: buildfuzz run failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return time.monotonic() - started


def kernel_of(command: str, kernels: list[str]) -> str:
    """The kernel a step builds: a word of its command that is the kernel's source (or ends
    with it, as an absolute path does)."""
    words = shlex.split(command) if command.count("'") % 2 == 0 else command.split()
    return next((k for k in kernels if any(w == k or w.endswith("/" + k) for w in words)), "")


def kernel_rows(report: dict, kernels: list[str]) -> list[str]:
    culprits = {kernel_of(c["command"], kernels): c for c in report["culprits"]}
    audited = {kernel_of(r["command"], kernels): r for r in (report["audit"] or {}).get("steps", [])}
    differed = {a["path"] for a in report["divergent_artifacts"]}
    lines = []
    for kernel in kernels:
        culprit, row = culprits.get(kernel), audited.get(kernel)
        varied = any(Path(p).name.startswith(Path(kernel).stem + ".") for p in differed)
        named = (f"named {culprit['kind']}, stabilised by {' + '.join(culprit['stabilized_by']) or 'nothing'}"
                 + (f" (unfinished: {culprit['unfinished']}, ~{culprit['unfinished_s']:.0f} s)"
                    if culprit.get("unfinished") else "")) if culprit else "not named"
        audit = "not audited"
        if row:
            bound = (f", variation < {percent_above(upper_bound_zero(row['replays']))}"
                     if row["result"] == "stable" else "")
            audit = f"audit {row['result']} in {row['replays']} replays ({row['seconds']:.0f} s{bound})"
        lines.append(f"  {kernel:34} {'differed' if varied else 'same':9} {named}; {audit}")
    return lines


def limit_s(report: dict) -> tuple[float, int]:
    """The replays the claims need × each step's time in the traced build ÷ the slots, and
    how many replayable steps had no time recorded (left out of the sum)."""
    audit = report["audit"] or {}
    varying = {c["command"] for c in report["culprits"]}
    search = full_search_replays(len(candidates()))
    total, unmeasured = 0.0, 0
    for row in audit.get("steps", []):
        if row["result"] == "not-replayable" or not row.get("step_s"):
            unmeasured += row["result"] != "not-replayable"
            continue
        need = DECIDING + search if row["command"] in varying or row["result"] == "varies" else REPLAYS
        total += need * row["step_s"]
    return total / max(audit.get("parallel", 1), 1), unmeasured


def cost(report: dict, wall: float) -> tuple[float, float, float, float, float]:
    """Audit + localization in builds' time, the limit in builds, limit / spent, the whole run
    in builds, and audit + localization in seconds (what two runs on one tree compare best:
    each limit follows its own traced build's step times, which the load moves)."""
    build_s, phases = report["runs"][0]["wall_s"], report["phases"]
    spent = phases.get("audit", 0.0) + phases.get("localize", 0.0)
    limit = limit_s(report)[0]
    return spent / build_s, limit / build_s, limit / spent if spent else 0.0, wall / build_s, spent


def show(report: dict, kernels: list[str], wall: float, load: tuple, load_after: tuple, budget: str | None) -> None:
    phases, audit = report["phases"], report["audit"] or {}
    build_s = report["runs"][0]["wall_s"]
    spent_builds, limit_builds, ratio, whole, _ = cost(report, wall)
    unmeasured = limit_s(report)[1]
    print(f"nnpack bench: {len(kernels)} kernels, --check-steps all, {len(report['runs'])} builds, "
          f"budget {budget or 'default'}; load average {load[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"verdict {report['verdict']}; one build (untraced reference) {build_s:.1f} s; audit "
          f"{phases.get('audit', 0):.0f} s + localization {phases.get('localize', 0):.0f} s = "
          f"{spent_builds * build_s:.0f} s = {spent_builds:.2f} builds' time; whole run {wall:.0f} s = {whole:.1f} builds")
    print(f"limit (replays the claims need x each step's time / {audit.get('parallel', 1)} slots): "
          f"{limit_builds * build_s:.0f} s = {limit_builds:.2f} builds; limit / spent = {ratio:.2f}"
          + (f" ({unmeasured} step(s) with no traced time, not in the limit)" if unmeasured else ""))
    print(f"audit: {audit.get('audited', 0)} of {audit.get('reaching', 0)} steps, {audit.get('roots', 0)} roots, "
          f"{audit.get('short', 0)} short of {REPLAYS} replays, {audit.get('left', 0)} left")
    cut = report.get("cut_short")
    print("cut short: " + (f"{len(cut['unsearched'])} unsearched, {len(cut['undecided'])} undecided, "
                           f"{cut['short_steps']} short, {cut['unexplained_roots']} unexplained; about "
                           f"{cut['more_s']:.0f} s more, --localize-budget {cut['suggested_s'] / 60:.0f}m"
                           if cut else "nothing"))
    print("kernels:")
    for line in kernel_rows(report, kernels):
        print(line)
    for note in report["notes"]:
        print(f"note: {note[:300]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--sources", type=Path, help="a directory with the seven checkouts, by repository name")
    where.add_argument("--fetch", action="store_true", help="clone them from GitHub first (network)")
    where.add_argument("--smoke", action="store_true", help="a tiny stand-in project, offline")
    parser.add_argument("--budget", help="buildfuzz's --budget (45m: the overnight run); default: none")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--work", type=Path, help="keep the venv, PeachPy and FP16 here between runs")
    parser.add_argument("--report-json", type=Path, help="keep buildfuzz's report here")
    parser.add_argument("--against", metavar="REV", help="also run buildfuzz as of git revision REV (e.g. main)")
    args = parser.parse_args()
    if not (args.sources or args.fetch or args.smoke):
        parser.error("give --sources DIR, --fetch or --smoke")
    with tempfile.TemporaryDirectory(prefix="bench-nnpack-") as tmp:
        work = args.work or Path(tmp)
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=tmp))
        if args.smoke:
            (tree, command), kernels = stand_in(run_dir), [f"k{i}" for i in range(len(SMOKE_MODES))]
        else:
            sources = fetch(work / "sources") if args.fetch else args.sources.resolve()
            (tree, command), kernels = prepare(sources, work), KERNELS
        costs = {}
        for label, root in ([(args.against, exported(args.against, Path(tmp) / "against"))] if args.against
                            else []) + [("this checkout", ROOT)]:
            load, store = os.getloadavg(), Path(tempfile.mkdtemp(prefix="store-", dir=tmp))
            wall = fuzz(tree, command, store, store / "report.json", args.runs, args.budget, root)
            report = json.loads((store / "report.json").read_text())
            if args.against:
                print(f"== buildfuzz as of {label}")
            show(report, kernels, wall, load, os.getloadavg(), args.budget)
            costs[label] = cost(report, wall)
        if args.report_json:
            shutil.copy(store / "report.json", args.report_json)
        for label, (spent, limit, ratio, whole, seconds) in costs.items() if args.against else ():
            print(f"side by side: {label:>14}: audit + localization {seconds:.0f} s = {spent:.2f} builds' time, "
                  f"limit {limit:.2f} builds, limit / spent {ratio:.2f}, whole run {whole:.1f} builds")
        if args.work:
            shutil.rmtree(work / "nnpack", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
