"""--parallel N: N builds at once, each in its own mount namespace at the campaign's path.

Real processes and real namespaces (unshare -m as root, unshare -Urm otherwise); the
fallback is tested with unshare taken off PATH.
"""

from __future__ import annotations

import itertools
import os
import signal
from dataclasses import replace
from pathlib import Path

import pytest
import xxhash

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig, validate
from fuzzer.errors import UsageError
from fuzzer.execute import choose
from fuzzer.execute.fake import FakeExecutor
from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.workspace import Workspace
from fuzzer.model import RunStatus
from fuzzer.plan import Perturbation
from fuzzer.report.build import overlaps
from fuzzer.store import Store
from fuzzer.tools import unshare
from fuzzer.tools.unshare import Isolation


PLAIN = Perturbation(1, None, 0.0, 0)


WAYS = [Isolation(user_namespace=True)] + ([Isolation(user_namespace=False)] if os.geteuid() == 0 else [])


needs_namespaces = pytest.mark.needs("unshare")


def spec_for(tmp_path: Path, command: str) -> BuildSpec:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "input.txt").write_text("in\n")
    return BuildSpec(command, Workspace(source, tmp_path / "store" / "workspace" / "src"), tmp_path / "logs")


def explore(index: int) -> RunRequest:
    return RunRequest(index, PLAIN)


def digest_of(text: str) -> str:
    """A text file's content digest (fuzzer.observe: xxh3-128)."""
    return xxhash.xxh3_128_hexdigest(text.encode())


def stored(path: Path):
    """The store's latest campaign row and its runs."""
    store = Store(path)
    try:
        row = store.campaign()
        return row, store.runs(row.id)
    finally:
        store.close()


def our_mounts(path: Path) -> list[str]:
    return [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(path) in line]


# ---------------------------------------------------------------- quick


def record(index: int, started_at: float, wall_s: float, host: str = "") -> RunRecord:
    return RunRecord(index, PLAIN, RunStatus.OK, 0, wall_s, None, "", host=host, started_at=started_at)


def test_overlaps_pair_runs_that_built_at_the_same_time_on_one_host():
    runs = [
        record(0, 100.0, 1.0),  # the reference, alone
        record(1, 101.0, 2.0),
        record(2, 101.5, 3.0),  # overlaps 1 and 3
        record(3, 103.0, 0.5),  # starts as 1 ends: overlaps only 2
        record(4, 102.0, 1.0, host="other"),  # at the same time, on another host
        record(5, 0.0, 0.0),  # loaded from a store: no start time
    ]
    assert overlaps(runs) == {0: [], 1: [2], 2: [1, 3], 3: [2], 4: [], 5: []}


def test_parallel_is_checked_before_anything_is_built(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    base = FuzzConfig(source=source, command="make", store=tmp_path / "store")
    for parallel in (0, -1, max(64, os.cpu_count()) + 1):
        with pytest.raises(UsageError, match="--parallel must be between 1 and"):
            validate(replace(base, parallel=parallel))
    with pytest.raises(UsageError, match="--in-place"):
        validate(replace(base, parallel=2, in_place=True, clean="true"))
    assert not (tmp_path / "store").exists()


def test_a_resumed_campaign_may_change_parallel_and_stores_what_now_runs(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    config = FuzzConfig(source=source, command="make", store=tmp_path / "store", runs=6, seed=1, localize=False)
    builds = itertools.count()

    def ctrl_c_in_the_third_build(p):
        return {"out": "same"} if next(builds) != 2 else signal.raise_signal(signal.SIGINT)

    first = run_campaign(replace(config, parallel=2),
                         executor_factory=lambda spec: FakeExecutor(ctrl_c_in_the_third_build))
    assert first.exit_code == 4
    with pytest.raises(UsageError, match="--jobs"):  # what a run is may not change
        run_campaign(replace(config, jobs=(1, 2), resume=True), executor_factory=lambda spec: FakeExecutor(dict))
    resumed = run_campaign(replace(config, parallel=3, resume=True),
                           executor_factory=lambda spec: FakeExecutor(lambda p: {"out": "same"}))
    assert resumed.exit_code == 0 and resumed.report.campaign == first.report.campaign
    assert stored(config.store)[0].config["parallel"] == 3


def test_without_unshare_builds_run_one_at_a_time_said_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no unshare
    unshare.forget()
    try:
        config = FuzzConfig(source=tmp_path, command="true", store=tmp_path / "store", parallel=3)
        assert choose.parallel_slots(config) == 1
        make = choose.executor_factory(config)
        executors = [make(spec_for(tmp_path, "true")) for _ in range(2)]  # explore, then localization
        assert [e.slots for e in executors] == [1, 1]
        said = capsys.readouterr().err.splitlines()
        assert said == [f"buildfuzz: {choose.serial_fallback(config)}"]
        assert "one at a time" in said[0] and "unshare not found" in said[0]
        assert choose.serial_fallback(replace(config, parallel=1)) == ""
    finally:
        unshare.forget()


@needs_namespaces  # quick: two tiny builds, ~0.2 s in all
@pytest.mark.parametrize("way", WAYS, ids=lambda w: "user" if w.user_namespace else "root")
def test_slots_build_at_once_at_the_one_path_and_keep_their_trees_until_reused(tmp_path, way):
    # each build records where it ran, then waits until both builds have started
    spec = spec_for(tmp_path, f"pwd > where.txt; id -u > uid.txt; echo $$ >> {tmp_path}/started; "
                              f"while [ $(wc -l < {tmp_path}/started) -lt 2 ]; do sleep 0.05; done")
    canonical = spec.workspace.path
    with LocalExecutor(spec, slots=2, isolation=way) as executor:
        futures = [executor.submit(explore(1)), executor.submit(explore(2))]
        with pytest.raises(RuntimeError, match="slots are busy"):
            executor.submit(explore(3))
        with pytest.raises(RuntimeError, match="collect them first"):
            executor.run(explore(4))
        finished = [f.result() for f in executor.as_completed(futures)]
        assert all(r.ok for r in finished), [r.log_tail for r in finished]
        one, two = sorted(finished, key=lambda r: r.index)
        assert one.started_at < two.started_at + two.wall_s and two.started_at < one.started_at + one.wall_s
        for run in (one, two):
            assert run.manifest.entries["where.txt"].digest == digest_of(f"{canonical}\n")
            assert run.manifest.entries["uid.txt"].digest == digest_of(f"{os.getuid()}\n")  # not root in a userns
            assert executor.fetch(run, "where.txt", tmp_path / f"where-{run.index}")
            assert (tmp_path / f"where-{run.index}").read_text() == f"{canonical}\n"
        assert not canonical.exists() or not any(canonical.iterdir())  # outside, the path is only a mount point
        (tmp_path / "started").write_text("1\n2\n")  # later builds need not wait
        third = next(executor.as_completed([executor.submit(explore(3))])).result()
        assert third.ok
        reused = one if executor.fetch(two, "where.txt", tmp_path / "again") else two
        assert not executor.fetch(reused, "where.txt", tmp_path / "gone")  # its slot built run 3 since
        assert executor.keep_tree(third, tmp_path / "kept") and (tmp_path / "kept" / "where.txt").is_file()
    assert not canonical.parent.with_name("workspace.slots").exists()  # close() removed every slot's tree
    assert our_mounts(tmp_path) == []
