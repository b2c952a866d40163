"""bench_seed_shape's --smoke mode: a CMake + Ninja chain of generators, one stable and one
of each kind that varies, audited and localized; every varying step named with its own
stabilisers (the bench exits non-zero otherwise)."""

import pytest

from test_bench_smoke import smoke


@pytest.mark.needs("cmake", "ninja")
def test_the_seed_shape_bench_names_each_varying_step_with_its_stabilisers():
    lines = smoke("bench_seed_shape.py").splitlines()
    assert "expectations: met" in lines, lines
    assert "culprit k1: intrinsic, stabilised by ASLR" in lines
    assert "culprit k2: intrinsic, stabilised by PYTHONHASHSEED" in lines
    assert any(line.startswith("culprit k3: intrinsic, stabilised by") and "ASLR" in line and "PYTHONHASHSEED" in line
               for line in lines)
    assert any("builds' time (target <= 3:" in line for line in lines)
    assert any(line.strip().startswith("k0") and " stable " in line for line in lines)
