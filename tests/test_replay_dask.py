"""Step replays on Dask: a worker replaying a step is sent only the files the step looked
at, by digest, and a file its cache holds is not sent again; never the whole tree. The
file set and the cache need no Dask; the replays run on a real local cluster (the
`cluster` fixture of test_dask.py: a scheduler and two worker processes on loopback)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from conftest import make_project
from fuzzer.execute.step_files import FileCache, StepFile, build_tree, digests, step_files
from fuzzer.execute.step_replay import StepCall
from fuzzer.observe import Entry, Manifest
from test_dask import cluster  # noqa: F401  (the fixture)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def entry(text: str, executable: bool = False) -> Entry:
    return Entry("file", sha(text), executable, len(text), 1_600_000_000_000_000_000)


MANIFEST = Manifest({
    "gen.py": entry("gen"), "data/a.txt": entry("a"), "data/b.txt": entry("b"), "data/sub/c.txt": entry("c"),
    "out.txt": entry("old out"), "big.bin": entry("never read"), "tool": entry("tool", executable=True),
    "link": Entry("symlink", "gen.py"), "../pkg.deb": entry("beside"),
})


def call(**fields) -> StepCall:
    base = dict(argv=("python3", "gen.py"), cwd=".", env={}, exit_code=0, restored=("out.txt",),
                compared=("out.txt",))
    return StepCall(**{**base, **fields})


def test_a_step_is_given_what_it_read_probed_listed_and_wrote_and_nothing_else():
    files = step_files(call(looked_at=("gen.py", "link", ".", "tool", "/usr/bin/python3", "../pkg.deb", "missing.h"),
                            listed=("data",)), MANIFEST)
    assert {f.path: f.kind for f in files} == {
        ".": "dir", "gen.py": "file", "link": "symlink", "tool": "file", "out.txt": "file",  # a probe of "." lists nothing
        "data": "dir", "data/a.txt": "file", "data/b.txt": "file", "data/sub": "dir"}  # a listing shows sub/, empty
    assert sha("never read") not in digests(files) and sha("beside") not in digests(files)
    assert sha("c") not in digests(files)  # inside a listed directory's subdirectory: not listed
    assert digests(files)[sha("gen")] == "gen.py"


def test_the_step_tree_has_the_traced_bytes_modes_and_mtimes(tmp_path):
    cache = FileCache(tmp_path / "cache")
    files = step_files(call(looked_at=("gen.py", "tool", "link"), cwd="data"), MANIFEST)
    for digest in cache.missing(sorted(digests(files))):
        cache.put(digest, next(t for t in ("gen", "tool", "old out") if sha(t) == digest).encode())
    assert cache.missing(sorted(digests(files))) == []
    tree = tmp_path / "tree"
    build_tree(tree, files, cache)
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")) == [
        "data", "gen.py", "link", "out.txt", "tool"]
    assert (tree / "gen.py").read_text() == "gen" and os.readlink(tree / "link") == "gen.py"
    assert os.access(tree / "tool", os.X_OK) and not os.access(tree / "gen.py", os.X_OK)
    assert (tree / "gen.py").stat().st_mtime_ns == 1_600_000_000_000_000_000
    (tree / "out.txt").write_text("a replay wrote this")
    assert cache.path(sha("old out")).read_text() == "old out"  # copies: the cache keeps the traced bytes


def test_the_cache_refuses_bytes_that_are_not_their_digest(tmp_path):
    cache = FileCache(tmp_path / "cache")
    with pytest.raises(ValueError, match="not that file"):
        cache.put(sha("a"), b"changed since the manifest")
    assert cache.missing([sha("a")]) == [sha("a")]


def test_a_file_set_never_holds_paths_outside_the_tree():
    files = step_files(call(looked_at=("/etc/passwd", "../pkg.deb"), listed=("/usr/lib",), restored=("/tmp/x.whl",),
                            cwd="/tmp"), MANIFEST)
    assert files == ()


# ---------------------------------------------------------------- on a real cluster


SEEDED = 'print(",".join({"alpha", "beta", "gamma", "delta", "eps", "zeta"}))\n'


def _traced_on(address: str, src: Path, store: Path):
    from fuzzer.execute.dask_executor import DaskPool
    from fuzzer.execute.local import BuildSpec
    from fuzzer.execute.run import RunKind, RunRequest
    from fuzzer.execute.workspace import Workspace
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


@pytest.mark.slow
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
