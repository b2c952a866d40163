"""The step audit (`--check-steps`) on real traced builds, and its bad input."""

from __future__ import annotations

import json

from conftest import buildfuzz, make_project
from test_audit import FILES, GENERATED
from test_bench_smoke import smoke


def test_every_step_audited_and_the_varying_one_rotates(tmp_path):
    src = make_project(tmp_path / "src", GENERATED, FILES)
    store, out = tmp_path / "s", tmp_path / "r.json"
    # --no-localize: the culprit below is the audit's own (localization would take it over)
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "2", "--check-steps", "all", "--no-localize",
                  "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text())
    audit = report["audit"]
    results = {s["command"]: s["result"] for s in audit["steps"]}
    assert results == {"mkdir -p out && python3 gen_seeded.py > out/seeded.txt": "varies",
                       "mkdir -p out && python3 gen_plain.py > out/plain.txt": "stable",
                       "cat out/seeded.txt out/plain.txt > out/app.txt": "stable"}
    assert (audit["audited"], audit["roots"], audit["left"]) == (3, 1, 0)
    seeded = next(c for c in report["culprits"] if "gen_seeded" in c["command"])
    assert seeded["kind"] == "intrinsic" and seeded["stabilized_by"] == ["PYTHONHASHSEED"]
    first = {s["identity"]: s["audited"] for s in audit["steps"]}

    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "2", "--check-steps", "50%", "--no-localize",
                  "--report-json", out, "--", "make")
    again = json.loads(out.read_text())["audit"]
    audited = [s for s in again["steps"] if s["result"] != "left"]
    oldest = sorted(first, key=first.get)[:2]
    assert [s["identity"] for s in audited] == oldest, "the least recently audited go first"
    assert all(s["last_audit"] == first[s["identity"]] for s in audited)
    assert again["left"] == 1 and "later campaigns" in again["why_left"]


def test_the_audit_bench_runs_in_its_smoke_mode():
    lines = smoke("bench_audit.py").splitlines()
    assert any(line.strip().startswith("audit, 1 at once") for line in lines), lines
    assert any(line.strip().startswith("bare,  1 at once") for line in lines), lines
    assert any(line.startswith("(c) analysis: 100 steps") for line in lines), lines
    assert any(line.startswith("(b) store growth:") for line in lines), lines


TWO_OUTPUTS = """
    all: out/seeded.txt
    out/seeded.txt: gen_two.py
        mkdir -p out && python3 gen_two.py
    """
# one process writes both: the set's order follows the hash seed (by hand: a new order in 3
# of 3 runs), the sorted one never changes
GEN_TWO = {"gen_two.py": 'words = {"alpha", "beta", "gamma", "delta", "eps", "zeta"}\n'
                         'open("out/seeded.txt", "w").write(",".join(words))\n'
                         'open("out/plain.txt", "w").write(",".join(sorted(words)))\n'}


def test_an_audited_culprit_names_the_outputs_that_varied_not_all_it_compared(tmp_path):
    src = make_project(tmp_path / "src", TWO_OUTPUTS, GEN_TWO)
    out = tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--check-steps", "all",
                  "--no-localize", "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text())
    (step,) = report["audit"]["steps"]
    assert step["result"] == "varies" and step["outputs"] == ["out/plain.txt", "out/seeded.txt"]
    assert "out/seeded.txt differed" in step["detail"]
    (culprit,) = report["culprits"]
    assert culprit["outputs"] == ["out/seeded.txt"] and culprit["stabilized_by"] == ["PYTHONHASHSEED"]
