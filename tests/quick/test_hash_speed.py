"""Content digests (fuzzer/observe.py): equal iff the bytes are equal, on either side of the
one-read limit for small files; sha256 for package files; and the scheme recorded with every
stored manifest, so that a store an older buildfuzz hashed with sha256 still opens, and its
runs are never compared with runs hashed now. How fast hashing is: bench/bench_hash.py."""

import hashlib
import json
import shlex
import sqlite3
import zlib
from contextlib import closing

import pytest
import xxhash
from hypothesis import given, settings, strategies as st

from conftest import buildfuzz_in_process
from fuzzer import structs
from fuzzer.config import FuzzConfig, stored_settings
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus, available_cpus
from fuzzer.observe import ALGORITHM, SMALL_FILE, Entry, Manifest, hash_file, take_manifest
from fuzzer.plan import Perturbation
from fuzzer.store import DB_NAME, Store
from fuzzer.store.migrations import MIGRATIONS

# a file's size either side of SMALL_FILE, and in the middle of several read buffers
SIZES = [0, 1, SMALL_FILE - 1, SMALL_FILE, SMALL_FILE + 1, 3 * SMALL_FILE + 12345]


def write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("size", SIZES)
def test_a_file_digest_is_xxh3_128_of_all_its_bytes(tmp_path, size):
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    assert hash_file(write(tmp_path / "f.o", data)) == xxhash.xxh3_128_hexdigest(data)


@pytest.mark.parametrize("size", [s for s in SIZES if s])
def test_one_byte_changed_anywhere_changes_the_digest(tmp_path, size):
    data = bytearray(b"\0" * size)
    digests = {hash_file(write(tmp_path / "f.bin", bytes(data)))}
    changed = {at for at in (0, size // 2, SMALL_FILE - 1, SMALL_FILE, size - 1) if at < size}
    for at in changed:
        data[at] ^= 1
        digests.add(hash_file(write(tmp_path / "f.bin", bytes(data))))
        data[at] ^= 1
    assert len(digests) == 1 + len(changed)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=4096), st.binary(max_size=4096), st.sampled_from(["x.o", "x.deb", "dist/x.whl", "x"]))
def test_digests_are_equal_exactly_when_the_bytes_are(tmp_path_factory, a, b, name):
    root = tmp_path_factory.mktemp("pair")
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / "a" / name).parent.mkdir(parents=True, exist_ok=True)
    (root / "b" / name).parent.mkdir(parents=True, exist_ok=True)
    same = hash_file(write(root / "a" / name, a)) == hash_file(write(root / "b" / name, b))
    assert same == (a == b)


@pytest.mark.parametrize("name", ["../hello_2.10-3_amd64.deb", "dist/x-1.0-py3-none-any.whl", "x.tar.zst", "a.zip"])
def test_a_package_file_digest_is_the_sha256_its_users_publish(tmp_path, name):
    data = b"package bytes\n" * 1000
    path = tmp_path / name.rsplit("/", 1)[-1]
    assert hash_file(write(path, data)) == hashlib.sha256(data).hexdigest()


def test_a_manifest_records_its_scheme_and_refuses_another(tmp_path):
    (tmp_path / "f").write_bytes(b"same")
    now = take_manifest(tmp_path)
    assert now.algorithm == ALGORITHM and now.select(["f"]).algorithm == ALGORITHM
    older = Manifest({"f": Entry("file", hashlib.sha256(b"same").hexdigest(), size=4)}, "sha256")
    with pytest.raises(ValueError, match="cannot be compared"):
        now.differing(older)
    with pytest.raises(ValueError, match="cannot be compared"):
        now.joined(older)


# ------------------------------------------------------------------ a store an older buildfuzz wrote


def older_store(root, source, finished: bool, command: str = "sh -c 'echo x > out'") -> None:
    """The store as the last buildfuzz before the scheme was recorded left it: its schema
    (every migration but the last), runs of 15 columns, manifests of sha256 digests."""
    root.mkdir()
    config = FuzzConfig(source=source, command=command, store=root, runs=3)
    settings = structs.to_data(stored_settings(config, str(root.resolve() / "workspace" / source.resolve().name),
                                               available_cpus()))
    manifest = {"out": ["file", hashlib.sha256(b"x\n").hexdigest(), False, 2, 0]}
    with closing(sqlite3.connect(root / DB_NAME)) as db, db:
        for migration in MIGRATIONS[:-1]:
            for statement in migration:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
        db.execute("INSERT INTO campaigns VALUES (1, 0, ?, ?, 7, ?, ?)",
                   (str(source), config.command, json.dumps(settings), 1.0 if finished else None))
        for index in range(2):
            perturbation = structs.encode(Perturbation(1 + index, (0,), 0.0, 0)).decode()
            db.execute("INSERT INTO runs VALUES (1, ?, '', ?, 'ok', 0, 0.5, 'd', ?, '/l.log', '', '[]', NULL, 0, '')",
                       (index, perturbation, zlib.compress(json.dumps(manifest).encode())))
        if finished:
            db.execute("INSERT INTO reports VALUES (1, 0, ?)", (json.dumps({
                "command": config.command, "verdict": "reproducible", "runs": [], "failed_runs": 0,
                "divergent_artifacts": []}),))


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "src"
    path.mkdir()
    return path


def test_an_older_store_opens_and_its_runs_keep_their_scheme(tmp_path, source):
    older_store(tmp_path / "s", source, finished=True)
    store = Store(tmp_path / "s", exclusive=True)
    runs = store.runs(1)
    assert [r.manifest.algorithm for r in runs] == ["sha256", "sha256"]
    assert not runs[0].manifest.differing(runs[1].manifest)  # the old runs still compare among themselves
    new = RunRecord(2, Perturbation(3, (0,), 0.0, 0), RunStatus.OK, 0, 0.5, Manifest({"out": Entry("file", "ab")}), "/l")
    store.save_run(1, new)
    assert [r.manifest.algorithm for r in store.runs(1)] == ["sha256", "sha256", ALGORITHM]
    store.close()
    shown = buildfuzz_in_process("explain", "--store", tmp_path / "s")
    assert shown.returncode == 0, shown.stderr


@pytest.mark.parametrize("command", [["run", "--resume", "--runs", "3", "--no-localize"], ["replay", "--run", "1"]])
def test_building_into_a_campaign_hashed_otherwise_is_refused_before_building(tmp_path, source, command):
    marker = tmp_path / "built"
    argv = ["sh", "-c", f"echo x > out; echo built >> {marker}"]
    older_store(tmp_path / "s", source, finished=False, command=shlex.join(argv))
    build = ["--", *argv] if command[0] == "run" else []
    done = buildfuzz_in_process(*command, "--store", tmp_path / "s",
                                *(["--source", source] if command[0] == "run" else []), *build)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "hashed with sha256" in done.stderr and "buildfuzz explain" in done.stderr
    assert not marker.exists()
