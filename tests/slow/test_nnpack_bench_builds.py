"""bench_nnpack's --smoke mode, offline: a CMake + Ninja stand-in with one stable and one
PeachPy-like generator, fuzzed with --check-steps all; the per-kernel table and the cost
against the limit are printed (bench/README.md, "The seed at full size")."""

import pytest

from test_bench_smoke import smoke


@pytest.mark.needs("cmake", "ninja", "strace")
def test_the_nnpack_bench_names_the_varying_stand_in_kernel_only():
    lines = smoke("bench_nnpack.py").splitlines()
    rows = {line.split()[0]: line for line in lines if line.startswith("  k")}
    assert set(rows) == {"k0", "k1"}, lines
    assert "not named" in rows["k0"] and "audit stable in 5 replays" in rows["k0"]
    named = rows["k1"].split("named ", 1)[1]
    assert named.startswith("intrinsic, stabilised by") and "ASLR" in named and "PYTHONHASHSEED" in named, rows["k1"]
    limit = next(line for line in lines if line.startswith("limit "))
    assert float(limit.split("limit / spent = ")[1].split()[0]) > 0, limit
