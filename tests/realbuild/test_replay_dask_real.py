"""Step replays on a real Dask cluster (the `cluster` fixture of test_dask_real.py: a
scheduler and two worker processes on loopback): a worker replaying a step is sent only
the files the step looked at, by digest, and a file its cache holds is not sent again;
never the whole tree. Without mount namespaces, one replay at a time."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import make_project
from test_dask_real import cluster  # noqa: F401  (the fixture)

SEEDED = 'print(",".join({"alpha", "beta", "gamma", "delta", "eps", "zeta"}))\n'


def _traced_on(address: str, src: Path, store: Path):
    from fuzzer.execute.dask_executor import DaskPool
    from fuzzer.execute.local import BuildSpec
    from fuzzer.execute.run import RunRequest
    from fuzzer.execute.workspace import Workspace
    from fuzzer.model import RunKind
    from fuzzer.plan import Perturbation

    pool = DaskPool(address)
    spec = BuildSpec("make", Workspace(src, store / "workspace" / "tree"), store / "logs")
    executor = pool(spec)
    request = RunRequest(0, Perturbation(1, tuple(sorted(os.sched_getaffinity(0)))), RunKind.TRACE_REFERENCE,
                         trace=True)
    return pool, executor, executor.run(request)


def _calls(record, root: str):
    from fuzzer.explain import audit
    from fuzzer.explain.writer import ReplayTargets
    from fuzzer.trace.steps import load_trace

    trace = load_trace(record.trace_path, root)
    plan = audit.plan(trace, set(record.manifest.entries), 1.0, (), {})
    targets = ReplayTargets(trace, trace, 1)
    return {a.step.command: targets.of(a.candidate).call for a in plan.chosen}


def test_workers_get_only_the_files_a_step_looked_at_once_and_replay_it_there(cluster, tmp_path):  # noqa: F811
    """With mount namespaces, one replay per worker at once; without (unshare hidden on the
    workers), one at a time, the step's tree moved to the campaign's path while it replays."""
    src = make_project(tmp_path / "src", """
        all: seeded.txt plain.txt
        seeded.txt: gen.py
            python3 gen.py > $@
        plain.txt: input.txt
            cat input.txt > $@
        """, {"gen.py": SEEDED, "input.txt": "plain\n"})
    (src / "big.bin").write_bytes(os.urandom(1 << 20))  # in the tree, read by no step
    cloudpickle = pytest.importorskip("cloudpickle")
    pool, executor, record = _traced_on(cluster, src, tmp_path / "store")
    try:
        assert record.ok, record.log_tail
        calls = _calls(record, str(tmp_path / "store" / "workspace" / "tree"))
        seeded, plain = calls["python3 gen.py > seeded.txt"], calls["cat input.txt > plain.txt"]
        session = executor.step_session(record)
        assert (session.count, session.serial_reason) == (2, "")  # root here: both workers mount namespaces
        entries = record.manifest.entries
        big = entries["big.bin"].digest
        cpus = record.perturbation.cpus
        with session.replayer(seeded, cpus, 0) as first:
            assert set(first.sent) == {entries["gen.py"].digest, entries["seeded.txt"].digest}
            assert first.replay().distinct > 1  # a real replay, there: the hash seed varies
        with session.replayer(seeded, cpus, 0) as again:
            assert again.sent == ()  # the same worker holds them now
            assert again.replay().distinct > 1
        with session.replayer(plain, cpus, 1) as other:  # the other worker: its own files
            assert set(other.sent) == {entries["input.txt"].digest, entries["plain.txt"].digest}
            outcome = other.replay()
            assert outcome.stable and not outcome.failed
        assert big not in (*first.sent, *again.sent, *other.sent)

        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this file
        pool.client.run(_hide_unshare, str(tmp_path / "no-tools"))
        try:
            serial = executor.step_session(record)
            assert serial.count == 1 and "unshare not found" in serial.serial_reason
            with serial.replayer(seeded, cpus, 0) as at_the_path:  # moved to the path under the host's lock
                assert at_the_path.replay().distinct > 1
            assert not Path(executor.site.path).exists()  # given back: the next replay or build finds it free
        finally:
            pool.client.run(_show_unshare)
    finally:
        executor.close()
        pool.close()


def _hide_unshare(path: str) -> None:
    """On a worker: no unshare on its PATH (as on a host without util-linux), probed again."""
    from fuzzer.tools import unshare

    os.environ["BUILDFUZZ_TEST_PATH"], os.environ["PATH"] = os.environ["PATH"], path
    unshare.forget()


def _show_unshare() -> None:
    from fuzzer.tools import unshare

    os.environ["PATH"] = os.environ.pop("BUILDFUZZ_TEST_PATH")
    unshare.forget()


def test_a_replay_writing_beside_its_tree_writes_a_parent_of_its_own(cluster, tmp_path):  # noqa: F811
    """A step writing `../side.txt`, replayed on a worker, writes its replay's own parent:
    never the workspace's on that host, where the host's builds write theirs."""
    src = make_project(tmp_path / "src", """
        out.txt:
            echo side > ../side.txt; sleep 1; cat ../side.txt > $@
        """)
    pool, executor, record = _traced_on(cluster, src, tmp_path / "store")
    try:
        assert record.ok, record.log_tail
        side = tmp_path / "store" / "workspace" / "side.txt"
        side.unlink()  # the traced build's, written on this host: now nothing may write it
        call = next(c for command, c in _calls(record, str(tmp_path / "store" / "workspace" / "tree")).items()
                    if "side" in command)
        with executor.step_session(record).replayer(call, record.perturbation.cpus, 0) as replayer:
            replaying = threading.Thread(target=lambda: outcomes.append(replayer.replay()))
            outcomes: list = []
            replaying.start()
            seen = False
            while replaying.is_alive():
                seen = seen or side.exists()
                time.sleep(0.01)
            replaying.join()
        assert outcomes and outcomes[0].stable and not outcomes[0].failed
        assert not seen and not side.exists()
    finally:
        executor.close()
        pool.close()
