"""A file the drawn builds differed in never leaves the report silently (issue 30, fossil):
when the traced rerun that diverged failed before it built the file, the report lists the
file with why no step is named for it: that rerun's number, exit status and failing target."""

import json

import pytest

from conftest import buildfuzz

# fossil's shape: a tool made by a step that fails at -j3 and above (there, the link racing
# `mkdir bld`), and a file the tool writes with the clock (VERSION.h): builds at -j1 and -j2
# succeed and differ in the stamp; the others fail before they make it
MAKEFILE = """\
all: stamp.txt
tool:
\t@test $$JOBS -lt 3 || { echo "too many jobs" >&2; exit 1; } && printf '#!/bin/sh\\ndate +%%s%%N\\n' > tool && chmod +x tool
stamp.txt: tool
\t./tool > stamp.txt
"""


@pytest.mark.needs("strace")
def test_a_file_a_failed_traced_rerun_never_built_is_listed_with_why(tmp_path):
    tree, report = tmp_path / "src", tmp_path / "report.json"
    tree.mkdir()
    (tree / "Makefile").write_text(MAKEFILE)
    done = buildfuzz("run", "-q", "--runs", 6, "--seed", 1, "--axes", "jobs", "--jobs", "1-4", "--source", tree,
                     "--store", tmp_path / "store", "--report-json", report, "--", "make -j{jobs} JOBS={jobs}")
    assert done.returncode == 1, done.stdout + done.stderr
    found = json.loads(report.read_text())
    differed = {r["index"] for r in found["runs"] if r["status"] == "ok" and r["group"] != found["runs"][0]["group"]}
    assert differed and found["failed_runs"], found["runs"]
    # the failing step leads to the stamp in the failed build, not in the drawn builds: its tool
    # was the reference's in every one of them
    assert not any("stamp.txt" in c["outputs"] for c in found["culprits"]), found["culprits"]
    culprits = {c["finding_id"] for c in found["culprits"]}
    assert all(f["rate"].get("seen", 0) == 0 for f in found["findings"] if f["id"] in culprits), found["findings"]
    [stamp] = found["unnamed"]
    assert (stamp["path"], stamp["why"], stamp["exit_code"], stamp["failing"]) == (
        "stamp.txt", "traced-rerun-failed", 2, ["tool"]), stamp
    assert set(stamp["runs"]) == differed
    assert "too many jobs" in open(stamp["log"]).read()  # the traced rerun's own log
    assert any(n.startswith("no step is named for stamp.txt (") and stamp["log"] in n for n in found["notes"]), found["notes"]
