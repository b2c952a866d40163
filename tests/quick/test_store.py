"""The store's schema and guards: versioned upgrades, and refusal (exit 2, one line, file
untouched, before any build) of newer, damaged, foreign, read-only or missing stores.

No test here runs a build: where the CLI is called, the build would leave a marker file,
and its absence shows the store was refused before building.
"""

import hashlib
import os
import sqlite3
import subprocess
from contextlib import closing

import pytest

from conftest import buildfuzz, buildfuzz_in_process
from fuzzer import structs
from fuzzer.config import FuzzConfig, stored_settings
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus, available_cpus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.store import DB_NAME, VERSION, Store, StoreError

# The schema buildfuzz wrote before it versioned its stores (user_version 0), as it was.
UNVERSIONED_SCHEMA = """
CREATE TABLE campaigns (id INTEGER PRIMARY KEY, created REAL NOT NULL, source TEXT NOT NULL,
    command TEXT NOT NULL, seed INTEGER NOT NULL, config TEXT NOT NULL, finished REAL);
CREATE TABLE runs (campaign INTEGER NOT NULL REFERENCES campaigns(id), idx INTEGER NOT NULL,
    label TEXT NOT NULL DEFAULT '', perturbation TEXT NOT NULL, status TEXT NOT NULL, exit_code INTEGER,
    wall_s REAL NOT NULL, digest TEXT, manifest BLOB, log_path TEXT NOT NULL, log_tail TEXT NOT NULL,
    jitter TEXT NOT NULL, trace_path TEXT, stragglers INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign, idx, label));
CREATE TABLE reports (campaign INTEGER PRIMARY KEY REFERENCES campaigns(id), written REAL NOT NULL,
    report TEXT NOT NULL);
"""


def record(index: int) -> RunRecord:
    manifest = Manifest({"out": Entry("file", "ab" * 32, size=2)})
    return RunRecord(index, Perturbation(1 + index, (0,), 0.0, 0), RunStatus.OK, 0, 0.5, manifest, f"/logs/{index}.log")


def make_store(root, source, finished=True) -> int:
    """A store holding one campaign of two runs, as `buildfuzz run` leaves it."""
    config = FuzzConfig(source=source, command="sh -c 'echo x > out'", store=root, runs=2)
    store = Store(root, create=True, exclusive=True)
    cid = store.new_campaign(str(source), config.command, 1, structs.to_data(stored_settings(
        config, str(root.resolve() / "workspace" / source.resolve().name), available_cpus())))
    for index in range(2):
        store.save_run(cid, record(index))
    if finished:
        store.save_report(cid, {"command": config.command, "verdict": "reproducible", "runs": [],
                                "failed_runs": 0, "divergent_artifacts": []})
        store.finish(cid)
    store.close()
    return cid


def fingerprint(root) -> tuple[str, str]:
    """The database and its WAL, as bytes on disk (a missing WAL counts as empty)."""
    def digest(path):
        return hashlib.sha256(path.read_bytes() if path.exists() else b"").hexdigest()
    return digest(root / DB_NAME), digest(root / (DB_NAME + "-wal"))


def sql(root, statement: str) -> list[tuple]:
    """One statement, committed, connection closed (so SQLite checkpoints its WAL into the file)."""
    with closing(sqlite3.connect(root / DB_NAME)) as db, db:
        return db.execute(statement).fetchall()


def campaign_count(root) -> int:
    return sql(root, "SELECT count(*) FROM campaigns")[0][0]


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "src"
    path.mkdir()
    return path


def run_on(store, source, marker):
    return buildfuzz_in_process("run", "--source", source, "--store", store, "--runs", "2", "--no-localize",
                                "--", "sh", "-c", f"echo x > out; echo built >> {marker}")


def assert_refused(result, *words):
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("buildfuzz: error:"), result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_unversioned_store_is_upgraded_and_keeps_its_data(tmp_path, source):
    root = tmp_path / "s"
    root.mkdir()
    with closing(sqlite3.connect(root / DB_NAME)) as db, db:
        db.executescript(UNVERSIONED_SCHEMA)
        db.execute("INSERT INTO campaigns VALUES (1, 0, ?, 'make', 7, ?, NULL)",
                   (str(source), '{"runs": 3, "artifacts": [], "ignore": [], "default_ignore": true, "jobs": [1, 8],'
                                 ' "axes": ["jobs"], "timeout": null, "in_place": false, "clean": null}'))
    store = Store(root, exclusive=True)
    store.save_run(1, record(0))
    store.close()
    assert sql(root, "PRAGMA user_version") == [(VERSION,)]
    store = Store(root)
    assert store.campaign().seed == 7 and store.campaign().config["runs"] == 3
    assert store.runs(1) == [record(0)]
    store.close()


def test_a_new_store_is_at_the_current_version(tmp_path):
    Store(tmp_path / "s", create=True).close()
    assert sql(tmp_path / "s", "PRAGMA user_version") == [(VERSION,)] and VERSION >= 1


def test_store_from_a_newer_buildfuzz_is_refused_before_building(tmp_path, source):
    root = tmp_path / "s"
    make_store(root, source)
    sql(root, f"PRAGMA user_version = {VERSION + 1}")
    before = fingerprint(root)
    assert_refused(run_on(root, source, tmp_path / "built"), str(root / DB_NAME), "newer")
    assert not (tmp_path / "built").exists()
    assert fingerprint(root) == before
    assert_refused(buildfuzz_in_process("explain", "--store", root), "newer")


def overwrite_a_page(root, page: int) -> None:
    (page_size,), (pages,) = sql(root, "PRAGMA page_size")[0], sql(root, "PRAGMA page_count")[0]
    assert pages > page
    with open(root / DB_NAME, "r+b") as f:
        f.seek(page * page_size)
        f.write(b"\xde\xad\xbe\xef" * (page_size // 4))


def test_damaged_store_is_refused_and_left_as_it_is(tmp_path, source):
    root = tmp_path / "s"
    make_store(root, source)
    overwrite_a_page(root, 2)
    before = fingerprint(root)
    assert_refused(run_on(root, source, tmp_path / "built"), str(root / DB_NAME), "damaged")
    assert_refused(buildfuzz_in_process("explain", "--store", root), "damaged")
    assert_refused(buildfuzz_in_process("replay", "--store", root, "--run", "1"), "damaged")
    assert not (tmp_path / "built").exists()
    assert fingerprint(root) == before


def test_a_file_that_is_no_database_is_refused(tmp_path, source):
    root = tmp_path / "s"
    root.mkdir()
    (root / DB_NAME).write_bytes(b"not sqlite at all\n" * 300)
    assert_refused(run_on(root, source, tmp_path / "built"), "damaged")
    assert (root / DB_NAME).read_bytes() == b"not sqlite at all\n" * 300


@pytest.mark.parametrize("change, words", [
    ("ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT 'ci-1'", ["'runs'", "unknown column 'host'"]),
    ("ALTER TABLE runs RENAME COLUMN wall_s TO seconds", ["lacks column 'wall_s'", "unknown column 'seconds'"]),
    ("ALTER TABLE campaigns DROP COLUMN finished", ["'campaigns'", "lacks column 'finished'"]),
])
def test_store_of_another_schema_is_refused_untouched(tmp_path, source, change, words):
    root = tmp_path / "s"
    make_store(root, source, finished=False)
    sql(root, change)
    before = fingerprint(root)
    result = buildfuzz_in_process("run", "--resume", "--source", source, "--store", root, "--runs", "2", "--",
                                  "sh", "-c", f"echo x > out; echo built >> {tmp_path / 'built'}")
    assert_refused(result, str(root / DB_NAME), "another schema", *words)
    assert not (tmp_path / "built").exists()
    assert fingerprint(root) == before and campaign_count(root) == 1


@pytest.fixture
def read_only():
    """Make paths read-only, for root too (an immutable attribute), and undo it after."""
    made = []

    def make(path):
        made.append(path)
        path.chmod(0o555 if path.is_dir() else 0o444)
        if os.geteuid() == 0 and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("running as root on a file system without chattr +i: nothing is read-only to root")

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.parametrize("what", ["database", "directory"])
def test_read_only_store_is_refused_before_building(tmp_path, source, read_only, what):
    root = tmp_path / "s"
    make_store(root, source)
    read_only(root / DB_NAME if what == "database" else root)
    before = fingerprint(root)
    assert_refused(run_on(root, source, tmp_path / "built"), "read-only", str(root))
    assert not (tmp_path / "built").exists()
    assert fingerprint(root) == before  # no campaign row, in the file or its WAL


def test_read_only_store_still_shows_its_report(tmp_path, source, read_only):
    root = tmp_path / "s"
    make_store(root, source)
    read_only(root / DB_NAME)
    r = buildfuzz("explain", "--store", root)  # a real process: the entry point, as a user starts it
    assert r.returncode == 0, r.stderr
    assert "REPRODUCIBLE" in r.stdout


@pytest.mark.parametrize("command", [["explain"], ["explain", "--relocalize"], ["replay", "--run", "0"],
                                     ["replay", "--jobs", "2"]])
def test_explain_and_replay_never_create_a_store(tmp_path, command):
    root = tmp_path / "nowhere" / "store"
    assert_refused(buildfuzz_in_process(*command, "--store", root), "no store at", str(root))
    assert not (tmp_path / "nowhere").exists()


def test_explain_of_a_campaign_that_never_finished_says_what_to_do(tmp_path, source):
    root = tmp_path / "s"
    make_store(root, source, finished=False)
    assert_refused(buildfuzz_in_process("explain", "--store", root), "no stored report", "--relocalize", "--resume")


def test_explain_of_an_unknown_campaign(tmp_path, source):
    root = tmp_path / "s"
    make_store(root, source)
    assert_refused(buildfuzz_in_process("explain", "--store", root, "--campaign", "9"), "holds no campaign 9")


def test_only_one_exclusive_holder_at_a_time(tmp_path):
    first = Store(tmp_path / "s", create=True, exclusive=True)
    with pytest.raises(StoreError, match=f"in use by another buildfuzz.*pid {os.getpid()}"):
        Store(tmp_path / "s", exclusive=True)
    Store(tmp_path / "s").close()  # reading needs no lock
    first.close()
    Store(tmp_path / "s", exclusive=True).close()


def test_a_campaign_without_runs_or_report_is_dropped(tmp_path, source):
    store = Store(tmp_path / "s", create=True, exclusive=True)
    empty = store.new_campaign(str(source), "make", 1, {})
    used = store.new_campaign(str(source), "make", 1, {})
    store.save_run(used, record(0))
    store.drop_if_empty(empty)
    store.drop_if_empty(used)
    assert store.campaign(empty) is None and store.campaign(used) is not None
    store.close()


def test_replay_trace_without_strace_names_the_package(tmp_path, source):
    root = tmp_path / "s"
    make_store(root, source)
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    r = buildfuzz("replay", "--store", root, "--run", "1", "--trace", env={"PATH": str(empty_bin)})
    assert_refused(r, "strace not found", "Debian package 'strace'")
    assert not (root / "workspace").exists()


def test_a_store_put_inside_a_work_tree_stays_out_of_git(tmp_path):
    git = lambda *args: subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True)
    git("init", "-q")
    Store(tmp_path / ".buildfuzz", create=True).close()
    assert git("status", "--porcelain", "--untracked-files=all").stdout == ""


def test_the_default_store_is_one_per_directory_outside_it(tmp_path, monkeypatch):
    from fuzzer.cli.options import default_store

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    one, other = default_store(tmp_path / "pkg"), default_store(tmp_path / "other" / "pkg")
    assert one != other and one == default_store(tmp_path / "pkg")
    assert one.parent == other.parent == tmp_path / "cache" / "buildfuzz" / "stores"
