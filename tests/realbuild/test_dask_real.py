"""The Dask executor: the same campaign on a real Dask cluster (a scheduler and two worker
processes on loopback, started here with the `dask` command as a user would) gives the
same verdicts, groups and culprits as on this machine; a worker killed mid-build costs a
retry, noted in the report, and leaves no process; a client killed with SIGKILL leaves no
build running on any worker. The source archive and the option checks need no Dask."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from fuzzer import axes as axis_table
from fuzzer.config import FuzzConfig

from conftest import ROOT, SCENARIOS, buildfuzz, make_project
from test_guard import wait_for


CLUSTER_START_S = 60


GONE_WITHIN_S = 30  # the client's SIGKILL → every remote build ended


# ---------------------------------------------------------------- on a real cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """`dask scheduler` and `dask worker --nworkers 2 --resources builds=1`, loopback only.
    Yields the scheduler's address; every process is ended by its process group."""
    pytest.importorskip("distributed", reason="needs the extra buildfuzz[dask]")
    from distributed import Client

    scratch = tmp_path_factory.mktemp("dask")
    address_file = scratch / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]
    started = [
        subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                 "--scheduler-file", str(address_file)],
                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        deadline = time.monotonic() + CLUSTER_START_S
        while not address_file.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        address = json.loads(address_file.read_text())["address"]
        started.append(subprocess.Popen(
            dask + ["worker", address, "--nworkers", "2", "--nthreads", "1", "--resources", "builds=1",
                    "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(scratch / "workers")],
            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_test_env()))
        with Client(address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=CLUSTER_START_S)
        yield address
    finally:
        for process in reversed(started):
            _end_group(process)


def _test_env() -> dict[str, str]:
    """Workers import buildfuzz from this checkout, as an installed one would."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _end_group(process: subprocess.Popen) -> None:
    for sig, patience in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
            process.wait(patience)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _workers(address: str, count: int = 2) -> dict[str, int]:
    """Worker address → pid, once `count` workers are there (a killed one comes back)."""
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        client.wait_for_workers(count, timeout=CLUSTER_START_S)
        return client.run(os.getpid)


def _marked(marker: str) -> list[psutil.Process]:
    """Live processes whose command line holds `marker` (a build's unique sleep)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if marker in " ".join(process.info["cmdline"] or ()) and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def _sleeping_project(root: Path, seconds: float) -> tuple[Path, str]:
    """A build that sleeps `seconds` in a process findable by its unique argument."""
    marker = f"{seconds}.{random.randrange(10**6):06d}"
    return make_project(root, f"""
        all: out
        out:
            sleep {marker}
            echo done > out
        """), marker


def _campaign(scenario: str, store: Path, dask: str | None, runs: int, axes: tuple[str, ...]):
    from fuzzer.campaign import run_campaign

    config = FuzzConfig(source=SCENARIOS / scenario, command="make -j{jobs}", store=store, runs=runs, seed=3,
                        axes=axes, dask=dask)
    return run_campaign(config).report


def _essence(report) -> dict:
    """What must not depend on where the builds ran."""
    return {
        "verdict": report.verdict,
        "groups": [(run.index, run.group, run.status) for run in report.runs],
        "artifacts": [(a.path, a.variants, bool(a.diff) and not a.diff.startswith("(no diff")) for a in
                      report.divergent_artifacts],
        "culprits": [(c.command, c.kind, c.axis, c.stabilized_by) for c in report.culprits],
    }


@pytest.mark.parametrize("scenario, runs, guided", [("clean-c", 4, True), ("nproc-output", 6, False),
                                                    ("hashseed", 4, False)])
def test_same_seed_same_verdict_groups_and_culprits_as_on_this_machine(cluster, tmp_path, scenario, runs, guided):
    """nproc-output and hashseed are localized: traced runs and step replays on a worker.
    hashseed also shows that builds get the client's environment: a Dask nanny gives its
    workers PYTHONHASHSEED=6640, which would make every build alike. clean-c is guided (its
    run 1 is traced, for targets); the others are not, so the 1-CPU run comes third."""
    axes = tuple(a for a in axis_table.DEFAULT if guided or a != "hold")
    local = _campaign(scenario, tmp_path / "local", None, runs, axes)
    remote = _campaign(scenario, tmp_path / "remote", cluster, runs, axes)
    assert _essence(remote) == _essence(local)
    assert {run.verdict for run in (local, remote)} == {"reproducible" if scenario == "clean-c" else "unreproducible"}
    assert all(run.log_path.startswith(str(tmp_path / "remote")) and Path(run.log_path).is_file()
               for run in remote.runs)


@pytest.mark.parametrize("shared", [False, True])
def test_workers_build_the_source_without_the_store_in_it(cluster, tmp_path, shared):
    """The default store lies inside the source: neither the archive nor a worker's copy
    from a shared source holds it, as a local workspace does not."""
    project = make_project(tmp_path / "src", "all:\n    ls -A > listing\n")
    (project / "data.txt").write_text("data\n")
    result = buildfuzz("run", "--source", project, "--store", project / ".buildfuzz", "--dask", cluster, "--runs", "2",
                       "--no-localize", *(["--shared-source"] if shared else []), "--", "make", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (project / ".buildfuzz" / "campaign-1" / "reference" / project.name / "listing").read_text() == \
        "Makefile\ndata.txt\nlisting\n"


def test_budget_and_resume_work_as_on_this_machine(cluster, tmp_path):
    """A budget shorter than one build leaves the reference alone (no verdict, exit 4);
    --resume continues that campaign on the cluster without rebuilding it."""
    project = make_project(tmp_path / "src", "all:\n    sleep 1.5\n    echo hi > out\n")
    common = ["--source", project, "--store", tmp_path / "store", "--dask", cluster, "--seed", "3", "--no-localize",
              "--report-json", tmp_path / "r.json"]
    first = buildfuzz("run", *common, "--runs", "3", "--budget", "1s", "--", "make")
    assert first.returncode == 4, first.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["exit_reason"] == "budget spent" and len(report["runs"]) == 1
    more = buildfuzz("run", *common, "--runs", "3", "--resume", "--", "make")
    assert more.returncode == 0, more.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["campaign"] == 1 and [run["index"] for run in report["runs"]] == [0, 1, 2]


def _remote_campaign(cluster: str, tmp_path: Path, project: Path, *options: str) -> subprocess.Popen:
    """`buildfuzz run --dask` on `project` in a subprocess, its output in pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "fuzzer", "run", "--source", str(project), "--store", str(tmp_path / "store"),
         "--dask", cluster, "--runs", "2", *options, "--", "make"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ended(process: subprocess.Popen, how: signal.Signals | None = None, patience: float = 180) -> tuple[str, str]:
    """Its output once it ended (after `how`, if given); killed if it does not end in time."""
    try:
        if how is not None:
            process.send_signal(how)
        return process.communicate(timeout=patience)
    finally:
        process.kill()
        process.wait()


def _gone(process: psutil.Process) -> bool:
    return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE


def test_a_worker_killed_mid_build_costs_a_retry_noted_and_leaves_no_process(cluster, tmp_path):
    workers = _workers(cluster)
    project, marker = _sleeping_project(tmp_path / "src", 4)
    campaign = _remote_campaign(cluster, tmp_path, project, "--no-localize", "--report-json", str(tmp_path / "r.json"))
    build = wait_for(lambda: _marked(marker), 60)[0]
    worker = next(p for p in build.parents() if p.pid in workers.values())
    lost = next(address for address, pid in workers.items() if pid == worker.pid)
    worker.send_signal(signal.SIGKILL)
    wait_for(lambda: _gone(build), GONE_WITHIN_S)  # the guard saw its worker go
    out, err = _ended(campaign)
    assert campaign.returncode == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert f"run 0: retried after worker {lost} was lost" in report["notes"]
    assert f"retried after worker {lost} was lost" in out
    assert [run["status"] for run in report["runs"]] == ["ok", "ok"]
    assert _marked(marker) == []
    _workers(cluster)  # its nanny brought it back, for the next test


@pytest.mark.parametrize("how, exit_code", [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGTERM, 4)])
def test_a_killed_client_leaves_no_build_on_any_worker(cluster, tmp_path, how, exit_code):
    """SIGKILL: the scheduler drops the client's tasks; SIGTERM: the campaign cancels them
    and exits 4 (no verdict). Either way the workers end the builds."""
    _workers(cluster)
    project, marker = _sleeping_project(tmp_path / "src", 600)
    campaign = _remote_campaign(cluster, tmp_path, project)
    build = wait_for(lambda: _marked(marker), 60)[0]
    assert campaign.pid not in {p.pid for p in build.parents()}  # it runs on a worker, not under the client
    _, err = _ended(campaign, how)
    assert campaign.returncode == exit_code, err
    wait_for(lambda: not _marked(marker), GONE_WITHIN_S)
    assert _gone(build)
