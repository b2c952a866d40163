"""Run buildfuzz on small real upstream builds, downloaded when the script runs.

    python bench/real_builds.py                          # zlib and libogg, 8 runs each
    python bench/real_builds.py --packages zlib --runs 10 --seed 2 --time-limit 900
    python bench/real_builds.py --packages hello         # GNU hello: autotools + gnulib, ~25 s a build
    python bench/real_builds.py --packages cjson,vblade,simplejson  # CMake; dpkg-buildpackage; a C-extension wheel
    python bench/real_builds.py --setup-apt              # first enable deb-src and apt-get update (root)
    python bench/real_builds.py --smoke                  # no download: a generated zlib-shaped tree (CI)

This is evaluation data, not a test: real builds show what the scenarios cannot (false
hazards on clean multi-line recipes, configure logs, libtool). Nothing upstream is
stored in the repository. For each package the Debian source package is fetched with
`apt-get source --download-only PKG` (if the newest version cannot be fetched, the
older versions `apt-cache showsrc` lists are tried; a package marked `sdist` is the newest
PyPI sdist instead, `pip download --no-binary :all: --no-deps`), unpacked with `dpkg-source -x`
into a temporary directory, fuzzed by `buildfuzz run` with a temporary store, and
deleted (`--keep` keeps the directory and prints where). `--smoke` touches no network:
it runs the same pipeline (buildfuzz under a budget, the report read back and printed) on
a tree generated in the temporary directory in zlib's shape (`./configure` writing a
Makefile, `ar rc` + `ranlib`, a program linked against the library), 3 runs.

Each package has a time bound (`--time-limit`, default 600 s): buildfuzz gets it as
`--budget` (so the campaign plans its runs and its localization to end inside it), and
the script kills buildfuzz's process group if it overruns by half again. Printed per
package: verdict, runs (failed), divergent artifacts, hazards (count and types),
culprits (kind, command), buildfuzz's exit code and the wall time.

`[run] ignore`-style exclusions are per package, each with the reason it was checked
by hand (two configure runs of the same tree, a second apart, differ in that file and
only for that reason); everything else the build leaves is compared.

Needs: apt sources with `deb-src` (Debian's deb822 file has `Types: deb deb-src`; the
script checks, and `--setup-apt` adds it and runs `apt-get update`), dpkg-dev
(`dpkg-source`), network access for the download, and the build tools of each package
(gcc, make, sh). The downloads are not verified against a keyring (dpkg-source says so
when debian-keyring is not installed); their checksums are.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = Path("/etc/apt/sources.list.d/debian.sources")


@dataclass(frozen=True)
class Package:
    command: str
    ignore: tuple[str, ...] = ()
    why: str = ""
    notes: str = ""
    sdist: str = ""  # a PyPI sdist (`pip download --no-binary :all:`) instead of a Debian source package


PACKAGES: dict[str, Package] = {
    "zlib": Package(
        "./configure && make -j{jobs}",
        ignore=("configure.log",),
        why="configure.log: zlib's configure appends `date` and ztest<PID>.c file names to it",
        notes="the zlib Makefile shape: ar rc + ranlib, rm -f + ln -s, gcc -c -o objs/X.o + mv X.lo",
    ),
    "libogg": Package(
        "./configure && make -j{jobs}",
        notes="small autotools + libtool library (two configure runs gave identical config.log)",
    ),
    "hello": Package(
        "./configure && make -j{jobs}",
        ignore=("config.log",),
        why="config.log: failed conftest links quote gcc's random /tmp/ccXXXXXX.o names",
        notes="autotools + gnulib; configure alone takes ~20 s on 2 CPUs",
    ),
    "cjson": Package(
        "cmake -S . -B build -DENABLE_CJSON_UTILS=ON -DBUILD_SHARED_AND_STATIC_LIBS=ON && cmake --build build -j {jobs}",
        notes="CMake, Unix Makefiles, shared and static libraries; by hand (CMake 3.25.1) three configures of one "
              "tree wrote three build/CMakeFiles/Makefile2, the check target's dependency lines in another order, "
              "under setarch -R too",
    ),
    "vblade": Package(
        "dpkg-buildpackage -b -uc -us",
        notes="Debian package (build-dep: asciidoctor) in Debian's make --shuffle FTBFS logs (vblade 25-2: bpf.o "
              "lacks config.h); debian/rules runs by #!/usr/bin/make -f, dh_auto_build --no-parallel: where /usr/bin/make "
              "is 4.3 no --shuffle reaches its makes (the report's scope says so)",
    ),
    "simplejson": Package(
        "python3 -m build --no-isolation --wheel",
        sdist="simplejson",
        notes="a wheel with a C extension, python -m build without isolation (needs build, setuptools, wheel)",
    ),
}
DEFAULT_PACKAGES = ("zlib", "libogg")
SMOKE = Package("./configure && make -j{jobs}",
                notes="generated, not downloaded: configure + Makefile, ar rc + ranlib, a program on the library")
SMOKE_CONFIGURE = """#!/bin/sh
# writes config.h and the Makefile, as zlib's configure does
echo '#define GREETING "hello"' > config.h
cat > Makefile <<'END'
OBJS = a.o b.o
all: prog
libs.a: $(OBJS)
\tar rc $@ $(OBJS)
\tranlib $@
prog: main.o libs.a
\tgcc -o $@ main.o libs.a
%.o: %.c config.h
\tgcc -O2 -c $< -o $@
END
"""
SMOKE_SOURCES = {
    "a.c": '#include "config.h"\nconst char *a(void) { return GREETING; }\n',
    "b.c": "int b(int x) { return x * 2; }\n",
    "main.c": '#include <stdio.h>\nconst char *a(void);\nint b(int);\nint main(void) { printf("%s %d\\n", a(), b(21)); }\n',
}


# ------------------------------------------------------------------ apt


def deb_src_enabled() -> bool:
    """True if any apt source has deb-src (deb822 Types: line, or a one-line entry)."""
    for path in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":
            if any("deb-src" in line.split(":", 1)[1].split()
                   for line in text.splitlines() if line.startswith("Types:")):
                return True
        elif re.search(r"^\s*deb-src\s", text, re.M):
            return True
    return False


def setup_apt() -> None:
    """Add deb-src to the Types: lines of Debian's deb822 sources file, then apt-get update."""
    text = SOURCES.read_text()
    new = re.sub(r"^Types:[ \t]*deb[ \t]*$", "Types: deb deb-src", text, flags=re.M)
    if new != text:
        SOURCES.write_text(new)
        print(f"added deb-src to the Types: lines of {SOURCES}")
    subprocess.run(["apt-get", "update"], check=True, stdout=subprocess.DEVNULL)


def source_versions(name: str) -> list[str]:
    out = subprocess.run(["apt-cache", "showsrc", name], capture_output=True, text=True).stdout
    versions = []
    for line in out.splitlines():
        if line.startswith("Version:"):
            v = line.split(":", 1)[1].strip()
            if v not in versions:
                versions.append(v)
    # newest first, as dpkg orders them
    def newer(a: str, b: str) -> bool:
        return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0
    ordered: list[str] = []
    for v in versions:
        i = next((i for i, o in enumerate(ordered) if newer(v, o)), len(ordered))
        ordered.insert(i, v)
    return ordered


def download(name: str, into: Path) -> Path:
    """apt-get source --download-only; returns the .dsc. Tries older versions if the newest fails."""
    attempts = [name] + [f"{name}={v}" for v in source_versions(name)[1:]]
    errors = []
    for spec in attempts:
        r = subprocess.run(["apt-get", "source", "--download-only", spec], cwd=into,
                           capture_output=True, text=True, timeout=600)
        dscs = sorted(into.glob("*.dsc"))
        if r.returncode == 0 and dscs:
            return dscs[0]
        errors.append(f"{spec}: " + (r.stderr.strip().splitlines() or ["failed"])[-1])
        for f in into.iterdir():
            f.unlink()
    raise RuntimeError("apt-get source failed: " + " | ".join(errors))


def unpack(dsc: Path, target: Path) -> None:
    r = subprocess.run(["dpkg-source", "-x", dsc.name, str(target)], cwd=dsc.parent,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("dpkg-source -x failed: " + r.stderr.strip()[-500:])


def write_smoke_source(target: Path) -> None:
    target.mkdir(parents=True)
    (target / "configure").write_text(SMOKE_CONFIGURE)
    (target / "configure").chmod(0o755)
    for name, text in SMOKE_SOURCES.items():
        (target / name).write_text(text)


def fetch_sdist(name: str, work: Path) -> str:
    """`pip download` of the newest sdist, unpacked into work/src; its version."""
    (work / "dl").mkdir(parents=True)
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-d",
                        str(work / "dl"), name], capture_output=True, text=True, timeout=600)
    archives = sorted((work / "dl").glob("*.tar.gz"))
    if r.returncode != 0 or not archives:
        raise RuntimeError("pip download failed: " + (r.stderr.strip().splitlines() or ["no sdist"])[-1])
    shutil.unpack_archive(archives[0], work / "dl")
    tree = next(p for p in (work / "dl").iterdir() if p.is_dir())
    tree.rename(work / "src")
    shutil.rmtree(work / "dl")
    return tree.name.rsplit("-", 1)[-1]


def fetch(name: str, work: Path, smoke: bool, sdist: str = "") -> str:
    """The package's source tree into work/src; its version."""
    if smoke:
        write_smoke_source(work / "src")
        return "generated"
    if sdist:
        return fetch_sdist(sdist, work)
    (work / "dl").mkdir(parents=True)
    dsc = download(name, work / "dl")
    unpack(dsc, work / "src")
    shutil.rmtree(work / "dl")
    return dsc.stem.split("_", 1)[-1]


# ------------------------------------------------------------------ buildfuzz


@dataclass
class Outcome:
    name: str
    version: str = ""
    exit_code: int | None = None
    wall_s: float = 0.0
    report: dict | None = None
    error: str = ""
    stderr_tail: str = ""
    notes: list[str] = field(default_factory=list)


def fuzz(name: str, package: Package, source: Path, work: Path, args: argparse.Namespace) -> Outcome:
    report_path = work / "report.json"
    cmd = [sys.executable, "-m", "fuzzer", "run", "--source", str(source), "--store", str(work / "store"),
           "--runs", str(args.runs), "--seed", str(args.seed), "--budget", f"{args.time_limit}s",
           "--timeout", str(args.build_timeout), "--report-json", str(report_path), "--quiet"]
    if args.jobs:
        cmd += ["--jobs", args.jobs]
    for glob in package.ignore:
        cmd += ["--ignore", glob]
    cmd += ["--", package.command]
    outcome = Outcome(name)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    hard_limit = args.time_limit * 1.5 + 60
    try:
        out, err = proc.communicate(timeout=hard_limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        outcome.error = f"killed after {hard_limit:.0f} s (time limit {args.time_limit} s + 50%)"
    outcome.wall_s = time.monotonic() - started
    outcome.exit_code = proc.returncode
    outcome.stderr_tail = "\n".join((err or "").strip().splitlines()[-8:])
    if args.verbose:
        print(out)
    if report_path.is_file():
        outcome.report = json.loads(report_path.read_text())
    elif not outcome.error:
        outcome.error = f"no report (buildfuzz exit {proc.returncode})"
    return outcome


# ------------------------------------------------------------------ printing


def describe(outcome: Outcome, package: Package) -> str:
    lines = [f"== {outcome.name} {outcome.version}: `{package.command}`"]
    if package.notes:
        lines.append(f"   shape: {package.notes}")
    if package.ignore:
        lines.append(f"   ignored: {', '.join(package.ignore)} ({package.why})")
    if outcome.error:
        lines.append(f"   ERROR: {outcome.error}")
    r = outcome.report
    if r is not None:
        runs = r.get("runs", [])
        lines.append(f"   verdict {r.get('verdict')} · {len(runs)} runs ({r.get('failed_runs', 0)} failed) · "
                     f"buildfuzz exit {outcome.exit_code} · {outcome.wall_s:.0f} s wall")
        builds = [x.get("wall_s") for x in runs if x.get("wall_s") is not None]
        if builds:
            lines.append(f"   build wall time: min {min(builds):.1f} s, max {max(builds):.1f} s")
        div = r.get("divergent_artifacts", [])
        if div:
            shown = ", ".join(f"{a['path']} ({a.get('variants', '?')} variants)" for a in div[:8])
            lines.append(f"   divergent artifacts ({len(div)}): {shown}{' ...' if len(div) > 8 else ''}")
        hazards = r.get("hazards", [])
        by_type: dict[str, int] = {}
        for h in hazards:
            by_type[h.get("type", "?")] = by_type.get(h.get("type", "?"), 0) + 1
        lines.append(f"   hazards: {len(hazards)}" + (f" ({', '.join(f'{t} {n}' for t, n in sorted(by_type.items()))})"
                                                     if by_type else ""))
        for h in hazards[:6]:
            pair = h.get("reader", "?")[:70] + " / " + h.get("writer", "?")[:70]
            lines.append(f"     - {h.get('type')} {h.get('file')}: {pair}")
        if len(hazards) > 6:
            lines.append(f"     ... {len(hazards) - 6} more")
        culprits = r.get("culprits", [])
        lines.append(f"   culprits: {len(culprits)}")
        for c in culprits[:6]:
            extra = f" axis={c['axis']}" if c.get("axis") else ""
            extra += f" stabilised by {', '.join(c['stabilized_by'])}" if c.get("stabilized_by") else ""
            lines.append(f"     - {c.get('kind')}{extra}: {c.get('command', '')[:110]}")
        for note in r.get("notes", [])[:4]:
            lines.append(f"   note: {str(note)[:160]}")
    elif outcome.stderr_tail:
        lines += ["   stderr: " + s for s in outcome.stderr_tail.splitlines()]
    return "\n".join(lines)


def summary_row(o: Outcome) -> str:
    r = o.report or {}
    return (f"{o.name:<8} {r.get('verdict', 'ERROR'):<15} runs {len(r.get('runs', [])):>3} "
            f"failed {r.get('failed_runs', '-')!s:>2} hazards {len(r.get('hazards', [])):>3} "
            f"culprits {len(r.get('culprits', [])):>2} exit {o.exit_code!s:>4} {o.wall_s:>6.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", default=",".join(DEFAULT_PACKAGES),
                    help=f"comma-separated, from: {', '.join(PACKAGES)} (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=8, help="buildfuzz --runs (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="buildfuzz --seed (default: %(default)s)")
    ap.add_argument("--jobs", help="buildfuzz --jobs range, e.g. 1-8 (default: buildfuzz's)")
    ap.add_argument("--time-limit", type=int, default=600,
                    help="seconds per package: buildfuzz --budget; killed at 1.5x + 60 s (default: %(default)s)")
    ap.add_argument("--build-timeout", type=int, default=300,
                    help="buildfuzz --timeout for one build (default: %(default)s)")
    ap.add_argument("--setup-apt", action="store_true",
                    help=f"add deb-src to {SOURCES} and run apt-get update first (needs root)")
    ap.add_argument("--keep", action="store_true", help="keep the temp directory (sources, stores, reports)")
    ap.add_argument("--verbose", "-v", action="store_true", help="print buildfuzz's own summary too")
    ap.add_argument("--smoke", action="store_true",
                    help="no download: 3 runs on a generated zlib-shaped tree, 120 s limit (what CI runs)")
    args = ap.parse_args()
    if args.smoke:
        return run_packages({"smoke": SMOKE}, argparse.Namespace(**{**vars(args), "runs": 3, "time_limit": 120}))

    names = [n.strip() for n in args.packages.split(",") if n.strip()]
    unknown = [n for n in names if n not in PACKAGES]
    if unknown:
        ap.error(f"unknown package(s) {', '.join(unknown)}; known: {', '.join(PACKAGES)}")
    for tool in ("apt-get", "apt-cache", "dpkg-source", "strace"):
        if not shutil.which(tool):
            print(f"warning: {tool} not found" + (" (buildfuzz will not localize)" if tool == "strace" else ""),
                  file=sys.stderr)
    if args.setup_apt:
        setup_apt()
    if not deb_src_enabled():
        print(f"no deb-src apt source: add deb-src to the Types: line of {SOURCES} and run apt-get update "
              "(or pass --setup-apt)", file=sys.stderr)
        return 2
    return run_packages({name: PACKAGES[name] for name in names}, args)


def run_packages(packages: dict[str, Package], args: argparse.Namespace) -> int:
    print(f"machine: {len(os.sched_getaffinity(0))} CPUs in the affinity set, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, Python {sys.version.split()[0]}")
    print(f"buildfuzz: runs={args.runs} seed={args.seed} jobs={args.jobs or 'default'} "
          f"time limit {args.time_limit} s per package\n")
    top = Path(tempfile.mkdtemp(prefix="buildfuzz-real-"))
    outcomes = []
    try:
        for name, package in packages.items():
            work = top / name
            outcome = Outcome(name)
            try:
                version = fetch(name, work, args.smoke, package.sdist)
                outcome = fuzz(name, package, work / "src", work, args)
                outcome.version = version
            except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                outcome.error = str(e)
            outcomes.append(outcome)
            print(describe(outcome, package), flush=True)
            print()
    finally:
        if args.keep:
            print(f"kept {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)
    print("summary")
    for o in outcomes:
        print("  " + summary_row(o))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if all(o.report is not None for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
