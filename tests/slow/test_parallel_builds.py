"""--parallel N: N builds at once, each in its own mount namespace at the campaign's path.

Real processes and real namespaces (unshare -m as root, unshare -Urm otherwise); the
fallback is tested with unshare taken off PATH.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from fuzzer.execute.local import LocalExecutor
from fuzzer.execute.run import RunRequest
from fuzzer.model import RunKind
from fuzzer.tools import unshare
from fuzzer.trace.steps import load_trace

from conftest import ROOT
from test_parallel import PLAIN, digest_of, needs_namespaces, our_mounts, spec_for, stored


# ---------------------------------------------------------------- real builds, slow


@needs_namespaces
def test_a_traced_build_in_a_slot_reads_as_one_at_the_campaign_path(tmp_path):
    """strace runs inside the namespace, so its paths are the campaign's: the parsed steps of a
    traced build in a slot are those of the same build traced by run(), outside any namespace."""
    spec = spec_for(tmp_path, "make -j{jobs}")
    (spec.workspace.source / "Makefile").write_text(
        "all: copy.txt sub/out.txt\ncopy.txt: input.txt\n\tcat input.txt > copy.txt\n"
        "sub/out.txt:\n\tmkdir -p sub && echo x > sub/out.txt\n")
    with LocalExecutor(spec, slots=2, isolation=unshare.isolation()) as executor:
        in_slot = next(executor.as_completed([executor.submit(RunRequest(1, PLAIN, RunKind.TRACE, trace=True))]))
        outside = executor.run(RunRequest(2, PLAIN, RunKind.TRACE, trace=True))
        traces = [load_trace(run.trace_path, str(spec.workspace.path)) for run in (in_slot.result(), outside)]

    def in_tree(trace):  # each step's files inside the build tree, as the trace names them
        return {step.command: sorted(p for p in [*step.reads, *step.writes] if not p.startswith("/"))
                for step in trace.steps}

    assert in_tree(traces[0]) == in_tree(traces[1])
    assert in_tree(traces[0])["cat input.txt > copy.txt"] == ["copy.txt", "input.txt"]


def run_parallel_cli(tmp_path: Path, command: str, *args, env=None):
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "fuzzer", "run", "--source", source, "--store", tmp_path / "store", "--seed", "5",
         "--parallel", "2", "--no-localize", "--report-json", tmp_path / "report.json", *args, "--", command],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


@needs_namespaces
def test_two_builds_at_once_both_build_at_the_campaign_path(tmp_path):
    proc = run_parallel_cli(tmp_path, "pwd > where.txt; sleep 1", "--runs", "3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    canonical = tmp_path / "store" / "workspace" / "src"
    runs = stored(tmp_path / "store")[1]
    assert [r.manifest.entries["where.txt"].digest for r in runs] == [digest_of(f"{canonical}\n")] * 3
    report = json.loads((tmp_path / "report.json").read_text())
    assert [run["overlapped_with"] for run in report["runs"]] == [[], [2], [1]]  # the reference runs alone
    assert any("2 builds ran at once" in note for note in report["notes"])
    assert not canonical.exists() and not canonical.parent.with_name("workspace.slots").exists()
    assert our_mounts(tmp_path) == []


def wait_until(condition, proc: subprocess.Popen, what: str, patience: float = 60.0) -> None:
    deadline = time.monotonic() + patience
    while not condition():
        assert proc.poll() is None, f"buildfuzz ended ({proc.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} after {patience:g} s"
        time.sleep(0.05)


def alive(processes: list[psutil.Process]) -> list[int]:
    return [p.pid for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@needs_namespaces
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "sigkill"])
def test_ctrl_c_sigterm_and_sigkill_end_every_parallel_build(tmp_path, sig):
    pids = tmp_path / "pids"
    # the reference (the first to write) ends at once; the two parallel builds stay, with a child each
    command = f"echo $$ >> {pids}; if [ $(wc -l < {pids}) -gt 1 ]; then sleep 300 & echo $! >> {pids}; wait; fi"
    proc = run_parallel_cli(tmp_path, command, "--runs", "4")
    try:
        # the reference, then 2 builds × (shell, sleep)
        wait_until(lambda: pids.exists() and len(pids.read_text().split()) >= 5, proc, "two builds running")
        ours = psutil.Process(proc.pid).children(recursive=True)  # guards, builds and their sleeps
        proc.send_signal(sig)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()  # a failed test must not leave a campaign running: its guards end the builds
            proc.communicate()
    assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 4)
    # after SIGKILL the guards notice buildfuzz is gone, then end their builds: give them a moment
    deadline = time.monotonic() + 30
    while alive(ours) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive(ours) == []
    assert [pid for pid in map(int, pids.read_text().split()) if psutil.pid_exists(pid)] == []
    assert our_mounts(tmp_path) == []
    if sig != signal.SIGKILL:  # a killed buildfuzz cannot tidy up; the next run replaces the trees
        workspace = tmp_path / "store" / "workspace"
        assert not workspace.exists() or list(workspace.iterdir()) == []  # no slot tree, no mount point


def test_without_unshare_parallel_runs_one_build_at_a_time(tmp_path):
    bin_dir = tmp_path / "bin"  # PATH: the tools the build and buildfuzz need, not unshare
    bin_dir.mkdir()
    for tool in ("sh", "sleep", "make"):
        (bin_dir / tool).symlink_to(subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip())
    proc = run_parallel_cli(tmp_path, "pwd > where.txt; sleep 0.3", "--runs", "3", env={"PATH": str(bin_dir)})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    fallback = [line for line in err.splitlines() if "one at a time" in line]
    assert len(fallback) == 1 and "unshare not found" in fallback[0]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [run["overlapped_with"] for run in report["runs"]] == [[], [], []]
    assert sum("one at a time" in note for note in report["notes"]) == 1
