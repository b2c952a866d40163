"""Scale: localization time and store growth on a 20,000-file tree and a 2 GiB artifact.

    python bench/bench_scale.py              # both
    python bench/bench_scale.py --only files --files 20000
    python bench/bench_scale.py --only big --size-mib 2048
    python bench/bench_scale.py --smoke      # 200 files and a 4 MiB artifact (seconds)

Each build below has one intrinsic step (it embeds the time), so every campaign diverges
and localizes. Per tree, one campaign of 3 runs: one build's time (the reference), the
localization time and its ratio to one build (target <= 3 when a build takes >= 30 s;
shorter builds pay the fixed pacing of step replays), the store's size after the campaign
(what a campaign adds), and whether any step backup was left behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench_core import machine_facts, table

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig

FILES_MAKEFILE = """\
all: bundle.tar stamp.txt
bundle.tar:
\tfind src -type f | sort | tar cf bundle.tar -T -
stamp.txt:
\tdate +%s%N > stamp.txt
"""
SMOKE_FILES, SMOKE_MIB = 200, 4
BIG_MAKEFILE = """\
all: big.bin
big.bin:
\tdate +%s%N > big.bin && head -c {size}M /dev/zero >> big.bin
"""


def files_tree(root: Path, count: int) -> Path:
    for i in range(count):
        directory = root / "src" / f"d{i // 500:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{i:05d}.c").write_text(f"int f{i}(void) {{ return {i}; }}\n")
    (root / "Makefile").write_text(FILES_MAKEFILE)
    return root


def big_tree(root: Path, size_mib: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Makefile").write_text(BIG_MAKEFILE.format(size=size_mib))
    return root


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def campaign(name: str, source: Path, tmp: Path) -> list[str]:
    store = tmp / f"store-{name}"
    started = time.perf_counter()
    outcome = run_campaign(FuzzConfig(source=source, command="make -j{jobs}", store=store, runs=3, seed=1))
    total = time.perf_counter() - started
    report = outcome.report
    build = report.runs[0].wall_s
    localize = report.phases.get("localize", 0.0)
    leftovers = [str(p) for p in store.rglob("step-outputs-*")]
    top = report.culprits[0] if report.culprits else None
    return [name, report.verdict, f"{build:.1f}", f"{localize:.1f}", f"{localize / build:.1f}x", f"{total:.0f}",
            f"{du(store) / 2**20:.0f} MiB", "none" if not leftovers else ", ".join(leftovers)[:40],
            f"{top.kind}: {top.command[:30]}" if top else "-"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("files", "big"))
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--smoke", action="store_true", help="both trees, small (seconds): the bench still runs")
    args = parser.parse_args()
    if args.smoke:
        args.files, args.size_mib = SMOKE_FILES, SMOKE_MIB
    machine_facts()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=os.environ.get("TMPDIR")) as tmp:
        tmp = Path(tmp)
        if args.only in (None, "files"):
            rows.append(campaign(f"{args.files} files", files_tree(tmp / "files", args.files), tmp))
        if args.only in (None, "big"):
            rows.append(campaign(f"{args.size_mib} MiB artifact", big_tree(tmp / "big", args.size_mib), tmp))
    table(["tree", "verdict", "build s", "localize s", "ratio", "total s", "store", "backups left", "culprit"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
