"""The step audit on what it cannot check: a step that used the network is listed as not
replayable with the reason, never counted as audited; and without mount namespaces the
replays run one at a time, said once in the report."""

from __future__ import annotations

import json
import shutil
import socket

from conftest import buildfuzz, make_project

NETWORK = """
    all: app.txt
    fetched.txt: fetch.py
        python3 fetch.py > $@
    plain.txt: plain.txt.in
        cat plain.txt.in > $@
    app.txt: fetched.txt plain.txt
        cat fetched.txt plain.txt > $@
    """


def test_a_networked_step_is_not_replayable_and_without_namespaces_replays_go_one_at_a_time(tmp_path):
    with socket.socket() as server:  # loopback only: the step connects here, nothing leaves the machine
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        fetch = f"import socket\nsocket.create_connection(('127.0.0.1', {server.getsockname()[1]})).close()\nprint('v1')\n"
        src = make_project(tmp_path / "src", NETWORK, {"fetch.py": fetch, "plain.txt.in": "plain\n"})
        tools = tmp_path / "bin"  # what the build and the trace need, and no unshare
        tools.mkdir()
        for tool in ("sh", "make", "python3", "cat", "strace", "env", "true"):
            (tools / tool).symlink_to(shutil.which(tool))
        out = tmp_path / "report.json"
        r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "2", "--parallel", "2",
                      "--check-steps", "all", "--no-localize", "--report-json", out, "--", "make",
                      env={"PATH": str(tools)})
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    audit = report["audit"]
    steps = {s["command"]: s for s in audit["steps"]}
    fetched = steps["python3 fetch.py > fetched.txt"]
    assert fetched["result"] == "not-replayable" and "used the network" in fetched["detail"]
    assert fetched["replays"] == 0 and fetched["audited"] == ""
    assert {steps[c]["result"] for c in ("cat plain.txt.in > plain.txt", "cat fetched.txt plain.txt > app.txt")} \
        == {"stable"}
    assert (audit["reaching"], audit["audited"], audit["roots"]) == (3, 2, 0)  # the networked step is not checked
    assert audit["parallel"] == 1
    serial = [n for n in report["notes"] if "step replays ran one at a time" in n]
    assert len(serial) == 1 and "unshare not found" in serial[0]
