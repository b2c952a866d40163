"""Every bench's --smoke mode runs its measured path for real, on the smallest input that
still does (bench/README.md says what each one does). Benches rot when nothing runs them:
an API that moves breaks a test, not a bench nobody runs. No timing is asserted: a smoke
run prints the same table as a full one, and the test checks that it got that far. The
smoke runs that build are in tests/slow/test_bench_smoke_builds.py and
tests/realbuild/test_bench_smoke_real.py (they use `smoke` from here); none of them
touch the network."""

import subprocess
import sys

from conftest import ROOT


def smoke(bench: str, timeout: int = 600) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / bench), "--smoke"], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_bench_hash_smoke_compares_take_manifest_with_cat():
    out = smoke("bench_hash.py")
    assert "cat > /dev/null" in out and "buildfuzz take_manifest" in out
    assert "ratio take_manifest / cat (throughput):" in out
