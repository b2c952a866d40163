"""Our comparators against diffoscope, side by side on the same pairs.

    python bench/bench_compare.py            # a wheel, a .deb, a 165 MiB ELF pair; 3 reps
    python bench/bench_compare.py --smoke    # the same pairs, tiny (a 1 MiB ELF), 1 rep: CI

Pairs, each built twice here:
- a wheel: scenarios/wheel-zip-timestamps built by `pip wheel` (2.1 s apart: only the zip
  timestamps differ); a generated 44-member zip when that build cannot run offline;
- a .deb: `dpkg-deb -b` of a package root holding a libfoo.so whose local labels are
  renumbered (the ar and tar timestamps differ too);
- an ELF pair of 165 MiB (the seed's libtorch_cpu.so size): 20,000 local labels numbered
  differently, and 165 MiB of the same random bytes in .rodata (`.incbin`).

Per pair, `look_inside` and `diffoscope --text` alternate ABBA (a busy neighbour slows
both); diffoscope gets --timeout seconds (then its time is a lower bound, marked `>`).
Printed: medians, the ratio diffoscope / ours, and our one-line summary. The issue's
target is the 165 MiB pair summarised in at most 10 s. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fuzzer.compare.inside import look_inside  # noqa: E402

WHEEL_SCENARIO = REPO / "scenarios" / "wheel-zip-timestamps"
ELF_MIB, SMOKE_ELF_MIB = 165, 1
LABELS, SMOKE_LABELS = 20_000, 200


def wheel_pair(scratch: Path) -> tuple[Path, Path, str]:
    """The scenario's wheel built twice at one path, or a generated zip if pip cannot build it."""
    pair = []
    for side in "ab":
        tree = scratch / "wheel-tree"
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(WHEEL_SCENARIO, tree, ignore=shutil.ignore_patterns("scenario.toml"))
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                                "--no-index", "--no-cache-dir", "-q", "-w", "dist", "."], cwd=tree,
                               capture_output=True)
        wheels = sorted((tree / "dist").glob("*.whl"))
        if built.returncode or not wheels:
            return (*generated_zips(scratch), "generated zip (pip wheel failed offline)")
        pair.append(wheels[0].rename(scratch / f"{side}-{wheels[0].name}"))
        time.sleep(2.1)  # zip timestamps count in 2 s steps
    return pair[0], pair[1], "pip wheel of scenarios/wheel-zip-timestamps"


def generated_zips(scratch: Path) -> tuple[Path, Path]:
    paths = []
    for side, stamp in (("a", (2020, 1, 1, 0, 0, 0)), ("b", (2021, 1, 1, 0, 0, 0))):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for i in range(44):
                z.writestr(zipfile.ZipInfo(f"pkg/m{i}.py", stamp), f"x = {i}\n")
        paths.append(scratch / f"{side}.whl")
        paths[-1].write_bytes(out.getvalue())
    return paths[0], paths[1]


def assembly(path: Path, labels: int, order: list[int], rodata: Path | None) -> None:
    lines = ["\t.text", "\t.globl entry", "entry:"]
    lines += [f"__local{n}:\n\taddl ${i}, %eax" for i, n in enumerate(order)][:labels]
    lines += ["\tret"]
    if rodata is not None:
        lines += ["\t.section .rodata", "\t.globl blob", "blob:", f'\t.incbin "{rodata}"']
    lines += ['\t.section .note.GNU-stack,"",@progbits']
    path.write_text("\n".join(lines) + "\n")


def elf_pair(scratch: Path, mib: int, labels: int) -> tuple[Path, Path, str]:
    """Two shared objects: same code and data, local labels numbered in another order."""
    rodata = scratch / "rodata.bin"
    with open(rodata, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
    pair = []
    for side, order in (("a", list(range(labels))), ("b", list(reversed(range(labels))))):
        source, out = scratch / f"{side}.s", scratch / side / "libfoo.so"
        out.parent.mkdir(exist_ok=True)
        assembly(source, labels, order, rodata)
        subprocess.run(["gcc", "-shared", "-nostdlib", "-Wl,--build-id", "-o", out, source], check=True)
        pair.append(out)
    rodata.unlink()
    return pair[0], pair[1], f"gcc -shared, {mib} MiB .rodata, {labels} local labels renumbered"


def deb_pair(scratch: Path, labels: int) -> tuple[Path, Path, str]:
    pair = []
    for side, order in (("a", list(range(labels))), ("b", list(reversed(range(labels))))):
        root = scratch / f"deb-{side}"
        (root / "DEBIAN").mkdir(parents=True)
        (root / "DEBIAN" / "control").write_text("Package: foo\nVersion: 1.0\nArchitecture: amd64\n"
                                                 "Maintainer: B F <bf@example.org>\nDescription: foo\n")
        lib = root / "usr" / "lib" / "libfoo.so"
        lib.parent.mkdir(parents=True)
        assembly(scratch / f"deb-{side}.s", labels, order, None)
        subprocess.run(["gcc", "-shared", "-nostdlib", "-o", lib, scratch / f"deb-{side}.s"], check=True)
        out = scratch / f"{side}" / "foo_1.0_amd64.deb"
        out.parent.mkdir(exist_ok=True)
        subprocess.run(["dpkg-deb", "--root-owner-group", "-b", root, out], check=True, capture_output=True)
        pair.append(out)
        time.sleep(1.1)  # ar and tar timestamps count in seconds
    return pair[0], pair[1], "dpkg-deb -b, libfoo.so with renumbered labels"


def ours(a: Path, b: Path) -> tuple[float, str]:
    started = time.perf_counter()
    found = look_inside(str(a), str(b), a.name)
    return time.perf_counter() - started, f"{found.format}: {found.summary}"


def diffoscope(a: Path, b: Path, timeout: float) -> tuple[float, bool]:
    """(seconds, finished): diffoscope in a session of its own, killed whole at the timeout."""
    started = time.perf_counter()
    proc = subprocess.Popen(["diffoscope", "--no-progress", "--text", os.devnull, str(a), str(b)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=timeout)
        return time.perf_counter() - started, True
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        return time.perf_counter() - started, False


def measure(name: str, a: Path, b: Path, how: str, reps: int, timeout: float, has_diffoscope: bool) -> list[str]:
    ours(a, b)  # untimed: imports (pyelftools) and the page cache
    mine, theirs, finished, summary = [], [], True, ""
    for rep in range(reps):
        order = ("ours", "diffoscope") if rep % 2 == 0 else ("diffoscope", "ours")
        for side in order:
            if side == "ours":
                seconds, summary = ours(a, b)
                mine.append(seconds)
            elif has_diffoscope:
                seconds, done = diffoscope(a, b, timeout)
                theirs.append(seconds)
                finished &= done
    size = max(a.stat().st_size, b.stat().st_size)
    ours_s = statistics.median(mine)
    if theirs:
        theirs_s = statistics.median(theirs)
        mark = "" if finished else ">"
        versus = f"diffoscope {mark}{theirs_s:7.2f} s   ratio diffoscope/ours {mark}{theirs_s / ours_s:7.1f}"
    else:
        versus = "diffoscope not installed"
    return [f"{name:6} {size / (1 << 20):8.2f} MiB   ours {ours_s:8.4f} s   {versus}",
            f"       ({how}; all reps ours: {', '.join(f'{s:.4f}' for s in mine)})",
            f"       ours says: {summary[:300]}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny pairs, one rep: checks the bench runs")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=None, help="seconds for diffoscope per comparison")
    args = parser.parse_args()
    reps = args.reps or (1 if args.smoke else 3)
    timeout = args.timeout or (60.0 if args.smoke else 600.0)
    has_diffoscope = shutil.which("diffoscope") is not None
    print(f"bench_compare: {reps} rep(s), diffoscope timeout {timeout:g} s, load average {os.getloadavg()[0]:.2f}, "
          f"{len(os.sched_getaffinity(0))} CPUs")
    with tempfile.TemporaryDirectory(prefix="buildfuzz-bench-compare-") as tmp:
        scratch = Path(tmp)
        pairs = []
        for name, make in (("wheel", lambda d: wheel_pair(d)),
                           ("deb", lambda d: deb_pair(d, SMOKE_LABELS if args.smoke else 2000)),
                           ("elf", lambda d: elf_pair(d, SMOKE_ELF_MIB if args.smoke else ELF_MIB,
                                                      SMOKE_LABELS if args.smoke else LABELS))):
            directory = scratch / name
            directory.mkdir()
            pairs.append((name, *make(directory)))
        for name, a, b, how in pairs:
            print("\n".join(measure(name, a, b, how, reps, timeout, has_diffoscope)), flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
