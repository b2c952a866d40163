"""bench/bench_compare.py's smoke mode runs end to end (CI runs it; the numbers are the bench's)."""

import subprocess
import sys

import pytest

from conftest import ROOT

BENCH = ROOT / "bench" / "bench_compare.py"


@pytest.mark.needs("gcc", "dpkg-deb")
def test_bench_compare_smoke():
    proc = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stdout.splitlines() if "ours says:" in line]
    assert len(said) == 3, proc.stdout
    assert "only zip entry timestamps differ" in said[0]
    assert "data.tar.xz/usr/lib/libfoo.so" in said[1]
    assert "local symbols renumbered; 1 local symbol renamed; code sections identical" in said[2]
