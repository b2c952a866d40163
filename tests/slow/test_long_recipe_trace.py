"""A recipe line longer than 4096 bytes (automake's generated headers: GNU hello's
lib/unistd.h rule is a `sh -c` script of about 6,500 bytes) is traced whole, so its step
is replayed as it ran, not as a cut script that fails with a syntax error."""

from __future__ import annotations

import json

import pytest

from conftest import buildfuzz, make_project

SEDS = " ".join(f"-e 's|@V{i}@|{i}|g'" for i in range(400))  # about 7,600 bytes of one recipe line


@pytest.mark.needs("strace")
def test_a_recipe_longer_than_4096_bytes_is_traced_whole_and_replays(tmp_path):
    src = make_project(tmp_path / "src", f"all: out.h\nout.h: in.h\n    sed {SEDS} in.h > out.h\n",
                       {"in.h": "@V1@ @V399@\n"})
    out = tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--check-steps", "all",
                  "--no-localize", "--axes", "jobs", "--report-json", out, "--", "make")
    assert r.returncode == 0, r.stderr
    [step] = json.loads(out.read_text())["audit"]["steps"]
    assert step["command"] == f"sed {SEDS} in.h > out.h"
    assert (step["result"], step["replays"]) == ("stable", 5), step["detail"]
