"""The README's recipes run as written, each from a fresh venv, with buildfuzz's store where
a user's would be (outside the tree: XDG_CACHE_HOME points into the bench's directory).

    python bench/bench_recipes.py                    # every recipe: downloads sources and packages
    python bench/bench_recipes.py --only wheel       # the recipes whose title has this word
    python bench/bench_recipes.py --smoke            # offline, ~1 min: see below

Each recipe is its README code blocks, run in order in one shared directory (the autotools
recipe unpacks what the Debian one fetched), a block as one `bash -e` script in which each
`buildfuzz run` line's exit code is kept instead of ending the script (1 is a verdict). A
recipe whose programs are missing here (apt-get, sudo, cmake) is skipped with the reason.
Printed per buildfuzz line: its exit code, its last line (the verdict and exit code), its
wall time, and whether anything named `.buildfuzz` was left in the recipe's tree.

--smoke needs no network: it extracts every recipe and checks each has a `buildfuzz run`
line, puts buildfuzz from this checkout into a fresh venv that sees the system's packages
(`--system-site-packages`: setuptools, wheel and buildfuzz's dependencies without pip
downloading them; the checkout by a .pth, not installed), and runs the pip wheel recipe's
`buildfuzz run` line, as written but for `--runs 2 --no-localize`, on a generated
one-module project in place of MarkupSafe.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r"^\*\*(.+?)\*\*", re.MULTILINE)
BUILDFUZZ = re.compile(r"\bbuildfuzz run\b")
WHEEL_WORD = "pip"  # the smoke's recipe: the title of the pip wheel one has this word


@dataclass(frozen=True)
class Recipe:
    title: str
    blocks: list[str]

    @property
    def programs(self) -> list[str]:
        """The programs its lines start with (after `cd DIR &&`), for the skip check."""
        found = []
        for line in (line for block in self.blocks for line in block.splitlines() if line.strip()):
            for command in re.split(r"&&|\|\||;", line.split("#")[0]):
                words = command.split()
                if words and words[0] not in ("cd", "buildfuzz") and "=" not in words[0]:
                    found.append(words[0])
        return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Ran:
    recipe: str
    line: str
    exit_code: int
    last: str  # the verdict line buildfuzz ended with
    seconds: float
    store_in_tree: list[str]


def recipes(readme: str) -> list[Recipe]:
    """The `## Recipes` section's recipes: each bold title and the code blocks before the next."""
    section = readme.split("\n## Recipes\n", 1)[1].split("\n## ", 1)[0]
    starts = [(m.start(), m.group(1).rstrip(".")) for m in TITLE.finditer(section)]
    found = []
    for (start, title), (end, _) in zip(starts, [*starts[1:], (len(section), "")]):
        blocks = [m.group(1) for m in FENCE.finditer(section[start:end])]
        if blocks:
            found.append(Recipe(title, blocks))
    return found


def fresh_venv(where: Path, offline: bool) -> dict[str, str]:
    """A new venv with buildfuzz from this checkout; the environment that runs in it. Offline
    it sees the system's packages and takes the checkout by a .pth and the console script
    (building it needs a newer setuptools than a system may have, and pip would download it)."""
    subprocess.run([sys.executable, "-m", "venv", *(["--system-site-packages"] if offline else []), str(where)],
                   check=True)
    python = where / "bin" / "python"
    if offline:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        Path(site, "buildfuzz-checkout.pth").write_text(f"{REPO}\n")
        (where / "bin" / "buildfuzz").write_text(f"#!{python}\nfrom fuzzer.cli import main\nmain()\n")
        (where / "bin" / "buildfuzz").chmod(0o755)
    else:
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(REPO)], check=True, cwd=where)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "PATH": f"{where / 'bin'}:{env.get('PATH', '')}", "VIRTUAL_ENV": str(where),
            "XDG_CACHE_HOME": str(where.parent / "cache")}


def script(block: str) -> str:
    """A block as a `bash -e` script that prints each buildfuzz line's exit code and time."""
    lines = ["set -e"]
    for number, line in enumerate(block.splitlines()):
        if BUILDFUZZ.search(line):
            lines += [f"start=$(date +%s.%N); rc=0; ( {line} ) > out-{number}.txt 2>&1 || rc=$?",
                      f'echo "ran {number} $rc $start $(date +%s.%N)"']
        elif line.strip():
            lines.append(line)
    return "\n".join(lines) + "\n"


def run_recipe(recipe: Recipe, work: Path, env: dict[str, str], timeout: float) -> list[Ran]:
    ran = []
    for block in recipe.blocks:
        before = set(work.rglob(".buildfuzz"))
        done = subprocess.run(["bash", "-c", script(block)], cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode:
            raise SystemExit(f"{recipe.title}: a line before buildfuzz failed (exit {done.returncode}):\n"
                             f"{done.stderr[-2000:]}")
        left = sorted(str(p.relative_to(work)) for p in set(work.rglob(".buildfuzz")) - before)
        timed = (line.split()[1:] for line in done.stdout.splitlines() if line.startswith("ran "))
        for number, rc, start, end in timed:
            out = (work / f"out-{number}.txt").read_text(errors="replace").strip().splitlines()
            ran.append(Ran(recipe.title, block.splitlines()[int(number)], int(rc), out[-1] if out else "",
                           float(end) - float(start), left))
    return ran


def missing(recipe: Recipe) -> list[str]:
    return [p for p in recipe.programs if shutil.which(p) is None and p not in ("pip", "python")]


def show(ran: list[Ran]) -> None:
    for r in ran:
        tree = f"store in the tree: {', '.join(r.store_in_tree)}" if r.store_in_tree else "nothing left in the tree"
        print(f"  {r.recipe}: exit {r.exit_code} in {r.seconds:.1f} s; {tree}\n    {r.line}\n    -> {r.last}")


def full(only: str, timeout: float) -> None:
    chosen = [r for r in recipes((REPO / "README.md").read_text()) if only.lower() in r.title.lower()]
    with tempfile.TemporaryDirectory(prefix="bench-recipes-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        for number, recipe in enumerate(chosen):
            lacking = missing(recipe)
            if lacking:
                print(f"  {recipe.title}: skipped, not on PATH: {', '.join(lacking)}")
                continue
            show(run_recipe(recipe, work, fresh_venv(Path(tmp) / f"venv-{number}", False), timeout))


def smoke() -> None:
    found = recipes((REPO / "README.md").read_text())
    for recipe in found:
        lines = [line for block in recipe.blocks for line in block.splitlines() if BUILDFUZZ.search(line)]
        assert lines, f"{recipe.title}: no `buildfuzz run` line"
        print(f"recipe: {recipe.title}: {len(recipe.blocks)} block(s), {len(lines)} buildfuzz line(s)")
    wheel = next(r for r in found if WHEEL_WORD in r.title.split())
    line = next(line for line in wheel.blocks[0].splitlines() if BUILDFUZZ.search(line))
    project = re.search(r"cd (\S+) &&", line)
    assert project, f"the wheel recipe's line no longer starts with cd DIR: {line}"
    with tempfile.TemporaryDirectory(prefix="bench-recipes-") as tmp:
        work = Path(tmp) / "work"
        (work / project.group(1)).mkdir(parents=True)
        (work / project.group(1) / "setup.py").write_text(
            'from setuptools import setup\nsetup(name="probe", version="1.0", py_modules=["probe"])\n')
        (work / project.group(1) / "probe.py").write_text("x = 1\n")
        env = {**fresh_venv(Path(tmp) / "venv", True), "PIP_NO_INDEX": "1"}  # and pip never asks an index
        short = Recipe(wheel.title, [re.sub(r"--runs \d+", "--runs 2 --no-localize", line)])
        ran = run_recipe(short, work, env, 600)
        show(ran)
        stores = list((Path(tmp) / "cache" / "buildfuzz").rglob("*.sqlite"))
        print(f"stores under XDG_CACHE_HOME: {len(stores)}")
        assert [r.exit_code for r in ran] and all(r.exit_code in (0, 1) for r in ran), ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--only", default="", help="run the recipes whose title has this word")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds for one block")
    args = parser.parse_args()
    smoke() if args.smoke else full(args.only, args.timeout)


if __name__ == "__main__":
    main()
