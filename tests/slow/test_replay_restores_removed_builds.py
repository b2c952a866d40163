"""A real traced build whose steps read files later steps removed (a hook's input.json
outside the tree, a check's source inside it): the step audit replays them with those
files put back from what the traced build kept, and nothing is left behind."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import buildfuzz, make_project
from fuzzer.execute import keep

MAKEFILE = """
    all: meta.txt checked.txt
    meta.txt:
        mkdir -p {hook} && echo payload > {hook}/input.json
        cat {hook}/input.json > meta.txt
        rm -rf {hook_root}
    checked.txt:
        mkdir -p scratch && echo 'int x;' > scratch/check.c
        cat scratch/check.c > checked.txt
        rm -rf scratch
    """


@pytest.mark.needs("strace")
def test_steps_whose_inputs_later_steps_removed_are_replayed_with_them_put_back(tmp_path):
    hook_root = tmp_path / "pip-tmp"  # outside the tree, gone when the build ends
    hook = hook_root / "hook"
    src = make_project(tmp_path / "src", MAKEFILE.format(hook=hook, hook_root=hook_root))
    out = tmp_path / "report.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--jobs", "1",
                  "--check-steps", "all", "--no-localize", "--report-json", out, "--", "make")
    assert r.returncode == 0, r.stderr
    steps = {s["command"]: s for s in json.loads(out.read_text())["audit"]["steps"]}
    # before: "read …/input.json, which `rm -rf …` removed afterwards", never replayed
    reader = steps[f"cat {hook}/input.json > meta.txt"]
    assert (reader["result"], reader["replays"]) == ("stable", 5), reader["detail"]
    check = steps["cat scratch/check.c > checked.txt"]
    assert (check["result"], check["replays"]) == ("stable", 5), check["detail"]
    assert not hook_root.exists()  # what the replays put back is gone again
    kept = [p for p in (tmp_path / "s").rglob("*.kept") if p.is_dir()]
    assert len(kept) == 1 and len(json.loads((kept[0] / "index.json").read_text())) == 2  # only what was read
    assert all([p.name for p in d.iterdir()] == [keep.LIBRARY] for d in tmp_path.rglob(".buildfuzz-kept-*"))


@pytest.mark.needs("keep")
def test_the_keep_keeps_while_its_build_runs_and_nothing_after(tmp_path):
    # a replay runs with the environment as traced: the library is preloaded there too
    trace = tmp_path / "logs" / "t.strace"
    trace.parent.mkdir()
    stash = keep.open_stash(str(trace), dict(os.environ))
    env = keep.environment(stash, dict(os.environ))
    for name in ("read.json", "later.json"):
        (tmp_path / name).write_text(f"{name}\n")
    subprocess.run(["sh", "-c", "rm read.json && mv later.json gone.json && ! rm absent 2>/dev/null"],
                   cwd=tmp_path, env=env, check=True)
    keep.settle(stash, str(trace))
    (entry,) = keep.entries(trace)  # the removal; mv onto a free name removes nothing
    assert entry[1] == str(tmp_path / "read.json")
    assert (keep.kept_dir(trace) / entry[2]).read_text() == "read.json\n"
    subprocess.run(["rm", "gone.json"], cwd=tmp_path, env=env, check=True)  # as a replay would
    assert not (tmp_path / "gone.json").exists() and keep.entries(trace) == [entry]
    assert [p.name for p in stash[0].iterdir()] == [keep.LIBRARY]
