import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


COSTLIEST_FIRST = ("realbuild", "slow", "quick")


def pytest_collection_modifyitems(items):
    """The directory is the cost group: tests/quick runs in seconds, tests/slow runs small real
    builds, tests/realbuild the bundled scenarios and package-shaped builds. The costliest
    group runs first, so under pytest-xdist the long builds start at once and the quick
    tests fill the workers' gaps at the end instead of a scenario finishing alone."""
    for item in items:
        group = item.path.parent.name
        if group in ("slow", "realbuild"):
            item.add_marker(pytest.mark.slow)
        if group == "realbuild":
            item.add_marker(pytest.mark.realbuild)
    items.sort(key=lambda item: COSTLIEST_FIRST.index(item.path.parent.name)
               if item.path.parent.name in COSTLIEST_FIRST else len(COSTLIEST_FIRST))


def buildfuzz(*args, cwd=None, timeout=300, env=None):
    """Run the real CLI in a subprocess (exit codes and stderr as a user sees them)."""
    return subprocess.run(
        [sys.executable, "-m", "fuzzer", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})},
    )


def make_project(root: Path, makefile: str, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Makefile").write_text(textwrap.dedent(makefile).replace("    ", "\t"))
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    return root


@pytest.fixture
def nproc_project(tmp_path):
    """Output that follows the CPU count: unreproducible on any machine with 2+ CPUs."""
    return make_project(tmp_path / "src", """
        all: out.txt
        out.txt:
            echo cpus=$$(nproc) > $@
        """)


@pytest.fixture
def clean_project(tmp_path):
    return make_project(tmp_path / "src", """
        all: c.txt
        a.txt:
            echo a > $@
        b.txt:
            echo b > $@
        c.txt: a.txt b.txt
            cat a.txt b.txt > $@
        """)
