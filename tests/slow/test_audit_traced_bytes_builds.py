"""The step audit matches files beside the tree to steps: a step that writes `../pkg.txt`,
as dpkg-buildpackage writes `../*.deb`."""

from __future__ import annotations

import json
import shutil

from conftest import buildfuzz, make_project

BESIDE = """
    all:
        python3 gen.py > ../pkg.txt
    """
HASH_ORDER = 'print(",".join({"alpha", "beta", "gamma", "delta", "eps", "zeta"}))\n'


def audit_of(tmp_path, src, *options, env=None):
    out = tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--check-steps", "all",
                  "--no-localize", "--report-json", out, *options, "--", "make", env=env)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(out.read_text())
    return r, report, {s["command"]: s for s in report["audit"]["steps"]}


def test_a_file_beside_the_tree_is_matched_to_the_step_that_wrote_it(tmp_path):
    src = make_project(tmp_path / "src", BESIDE, {"gen.py": HASH_ORDER})
    tools = tmp_path / "bin"  # no unshare: replays run in the tree itself, where ../pkg.txt is the build's
    tools.mkdir()
    for tool in ("sh", "make", "python3", "strace", "env", "true"):
        (tools / tool).symlink_to(shutil.which(tool))
    _, report, steps = audit_of(tmp_path, src, "--artifact", "../*", env={"PATH": str(tools)})
    assert report["audit"]["reaching"] == 1, report["audit"]
    gen = steps["python3 gen.py > ../pkg.txt"]
    assert gen["outputs"] == ["../pkg.txt"]
    assert gen["result"] == "varies", gen
