"""store: every campaign's configuration, runs, manifests and report, in SQLite (WAL).

A run is committed the moment it ends, so a campaign killed at any point resumes
from its last complete run without repeating or losing any (`--resume`).
Manifests are stored zlib-compressed as JSON: a tree's file list compresses ~10×.
The schema is versioned (`PRAGMA user_version`, upgraded by MIGRATIONS); a store that
is newer, damaged, foreign or read-only is refused when opened, before any build.
A campaign or replay holds `<store>/lock` (flock) while it runs: they share the workspace.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import sqlite3
import time
import zlib
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Iterator

from fuzzer.config import UsageError
from fuzzer.execute.jitter import JitterEvent
from fuzzer.execute.run import RunRecord, Status
from fuzzer.observe import Manifest
from fuzzer.plan import Perturbation

DB_NAME = "buildfuzz.sqlite"
LOCK_NAME = "lock"

# MIGRATIONS[i] takes a store from schema version i to i + 1 (`PRAGMA user_version`).
# Version 0 is also the store buildfuzz wrote before it versioned its schema: it already
# holds these tables, so the first migration creates them only where they are missing.
MIGRATIONS: list[tuple[str, ...]] = [
    (
        """CREATE TABLE IF NOT EXISTS campaigns (
            id INTEGER PRIMARY KEY,
            created REAL NOT NULL,
            source TEXT NOT NULL,
            command TEXT NOT NULL,
            seed INTEGER NOT NULL,
            config TEXT NOT NULL,
            finished REAL
        )""",
        """CREATE TABLE IF NOT EXISTS runs (
            campaign INTEGER NOT NULL REFERENCES campaigns(id),
            idx INTEGER NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            perturbation TEXT NOT NULL,
            status TEXT NOT NULL,
            exit_code INTEGER,
            wall_s REAL NOT NULL,
            digest TEXT,
            manifest BLOB,
            log_path TEXT NOT NULL,
            log_tail TEXT NOT NULL,
            jitter TEXT NOT NULL,
            trace_path TEXT,
            stragglers INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (campaign, idx, label)
        )""",
        """CREATE TABLE IF NOT EXISTS reports (
            campaign INTEGER PRIMARY KEY REFERENCES campaigns(id),
            written REAL NOT NULL,
            report TEXT NOT NULL
        )""",
    ),
    (  # the memory across campaigns (fuzzer/memory.py)
        # what a new campaign replays first, chosen once when it starts so that a resume replays the same
        """CREATE TABLE remembered_runs (
            campaign INTEGER NOT NULL REFERENCES campaigns(id),
            position INTEGER NOT NULL,
            perturbation TEXT NOT NULL,
            origin INTEGER NOT NULL,
            PRIMARY KEY (campaign, position)
        )""",
        # each finding of a source and command, under its stable id, across campaigns
        """CREATE TABLE findings (
            source TEXT NOT NULL,
            command TEXT NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            what TEXT NOT NULL,
            scope TEXT NOT NULL,
            status TEXT NOT NULL,
            status_campaign INTEGER NOT NULL,
            first_campaign INTEGER NOT NULL,
            first_seen REAL NOT NULL,
            last_campaign INTEGER NOT NULL,
            last_seen REAL NOT NULL,
            PRIMARY KEY (source, command, id)
        )""",
        # findings `buildfuzz accept` marked as known: they no longer fail CI
        """CREATE TABLE accepted (
            source TEXT NOT NULL,
            command TEXT NOT NULL,
            id TEXT NOT NULL,
            what TEXT NOT NULL,
            accepted REAL NOT NULL,
            PRIMARY KEY (source, command, id)
        )""",
    ),
]
VERSION = len(MIGRATIONS)


class StoreError(UsageError):
    """A store that cannot be used as asked: missing, newer, damaged, foreign, read-only
    or in use. Raised when the store is opened, before any build runs."""


@dataclass(frozen=True)
class CampaignRow:
    id: int
    source: str
    command: str
    seed: int
    config: dict
    finished: float | None


@dataclass(frozen=True)
class FindingRow:
    """One finding of a source and command across campaigns (fuzzer/memory.py gives the rules)."""

    id: str
    kind: str
    what: str
    scope: str  # what the campaign that last saw it compared: only a campaign comparing the same may call it fixed
    status: str  # new | still | fixed
    status_campaign: int  # the campaign that gave it this status
    first_campaign: int
    first_seen: float
    last_campaign: int
    last_seen: float


FINDING_COLUMNS = ", ".join(f.name for f in fields(FindingRow))


class Store:
    """The store directory: the SQLite database, logs, reference trees and workspace.

    `create` makes a missing store; otherwise a missing one is an error (explain and
    replay never create one). `exclusive` holds the store's lock until `close()`: a
    campaign or a replay builds in the store's one workspace, so only one may run.
    Opening checks the schema (upgrading an older one) before anything is written.
    """

    def __init__(self, root: Path, *, create: bool = False, exclusive: bool = False):
        # absolute: builds (and strace's -o) run with the workspace as their cwd
        self.root = root.absolute()
        self.path = self.root / DB_NAME
        self._lock: int | None = None
        if not create and not self.path.is_file():
            raise StoreError(f"no store at {root} (it holds no {DB_NAME}); `buildfuzz run --store {root}` makes one")
        try:
            if create:
                self.root.mkdir(parents=True, exist_ok=True)
            if exclusive:
                _require_writable(self.root, self.path)
                self._lock = _take_lock(self.root / LOCK_NAME)
            self.db = sqlite3.connect(f"{self.path.as_uri()}?mode={'rwc' if create else 'rw'}", uri=True,
                                      timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            self._unlock()
            raise StoreError(f"cannot use store {root}: {e}") from None
        try:
            _open_schema(self.db, self.path, wal=exclusive)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.db.close()
        self._unlock()

    def holder(self) -> str | None:
        """The pid of the campaign or replay that holds the store's lock, if one does.
        (The probe holds a shared lock for an instant; only `explain` asks, and only
        for a campaign without a report.)"""
        try:
            fd = os.open(self.root / LOCK_NAME, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return None
        except BlockingIOError:
            return _owner(fd)
        finally:
            os.close(fd)

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None

    def campaign_dir(self, campaign: int) -> Path:
        return self.root / f"campaign-{campaign}"

    def new_campaign(self, source: str, command: str, seed: int, config: dict) -> int:
        cur = self.db.execute(
            "INSERT INTO campaigns (created, source, command, seed, config) VALUES (?, ?, ?, ?, ?)",
            (time.time(), source, command, seed, json.dumps(config)),
        )
        return int(cur.lastrowid)

    def campaign(self, campaign: int | None = None) -> CampaignRow | None:
        """One campaign, or the latest when `campaign` is None."""
        query = "SELECT id, source, command, seed, config, finished FROM campaigns"
        row = (
            self.db.execute(query + " WHERE id = ?", (campaign,)).fetchone()
            if campaign is not None
            else self.db.execute(query + " ORDER BY id DESC LIMIT 1").fetchone()
        )
        if row is None:
            return None
        return CampaignRow(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])

    def update_config(self, campaign: int, config: dict) -> None:
        self.db.execute("UPDATE campaigns SET config = ? WHERE id = ?", (json.dumps(config), campaign))

    def drop_if_empty(self, campaign: int) -> None:
        """Forget a campaign that stored neither a run nor a report (it ended before its
        reference build did): an empty row would only be resumed or listed for nothing."""
        dropped = self.db.execute(
            "DELETE FROM campaigns WHERE id = ? AND NOT EXISTS (SELECT 1 FROM runs WHERE campaign = ?)"
            " AND NOT EXISTS (SELECT 1 FROM reports WHERE campaign = ?)", (campaign, campaign, campaign)).rowcount
        if dropped:  # SQLite reuses the id: the next campaign must not inherit what this one chose to replay
            self.db.execute("DELETE FROM remembered_runs WHERE campaign = ?", (campaign,))

    def require_campaign(self, campaign: int | None = None) -> CampaignRow:
        """Like `campaign()`, but a missing campaign is the user's error."""
        row = self.campaign(campaign)
        if row is None:
            which = f"campaign {campaign}" if campaign is not None else "any campaign"
            raise StoreError(f"store {self.root} holds no {which}")
        return row

    def finish(self, campaign: int) -> None:
        self.db.execute("UPDATE campaigns SET finished = ? WHERE id = ?", (time.time(), campaign))

    def save_run(self, campaign: int, record: RunRecord, label: str = "") -> None:
        manifest = record.manifest
        self.db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                campaign,
                record.index,
                label,
                json.dumps(record.perturbation.to_json()),
                record.status.value,
                record.exit_code,
                record.wall_s,
                manifest.digest() if manifest else None,
                zlib.compress(json.dumps(manifest.to_json()).encode()) if manifest else None,
                record.log_path,
                record.log_tail,
                json.dumps([vars_of(e) for e in record.jitter]),
                record.trace_path,
                record.stragglers,
            ),
        )

    def runs(self, campaign: int, label: str = "") -> list[RunRecord]:
        rows = self.db.execute(
            "SELECT idx, perturbation, status, exit_code, wall_s, manifest, log_path, log_tail, jitter,"
            " trace_path, stragglers FROM runs WHERE campaign = ? AND label = ? ORDER BY idx",
            (campaign, label),
        ).fetchall()
        return [_record(row) for row in rows]

    def save_report(self, campaign: int, report: dict) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO reports VALUES (?, ?, ?)", (campaign, time.time(), json.dumps(report))
        )

    def report(self, campaign: int) -> dict | None:
        row = self.db.execute("SELECT report FROM reports WHERE campaign = ?", (campaign,)).fetchone()
        return json.loads(row[0]) if row else None

    def reports_before(self, source: str, command: str, campaign: int) -> Iterator[tuple[int, dict]]:
        """The stored reports of earlier campaigns of this source and command, latest first
        (read one at a time: the caller usually stops after the first few)."""
        rows = self.db.execute(
            "SELECT c.id, r.report FROM campaigns c JOIN reports r ON r.campaign = c.id"
            " WHERE c.source = ? AND c.command = ? AND c.id < ? ORDER BY c.id DESC", (source, command, campaign))
        for cid, report in rows:
            yield cid, json.loads(report)

    def save_remembered(self, campaign: int, chosen: list[tuple[Perturbation, int]]) -> None:
        """What the campaign replays first: each perturbation with the campaign it came from."""
        with _transaction(self.db):
            self.db.execute("DELETE FROM remembered_runs WHERE campaign = ?", (campaign,))
            rows = [(campaign, i, json.dumps(p.to_json()), origin) for i, (p, origin) in enumerate(chosen)]
            self.db.executemany("INSERT INTO remembered_runs VALUES (?, ?, ?, ?)", rows)

    def remembered(self, campaign: int) -> list[tuple[Perturbation, int]]:
        rows = self.db.execute("SELECT perturbation, origin FROM remembered_runs WHERE campaign = ? ORDER BY position",
                               (campaign,))
        return [(Perturbation.from_json(json.loads(p)), origin) for p, origin in rows]

    def findings(self, source: str, command: str) -> dict[str, FindingRow]:
        rows = self.db.execute(f"SELECT {FINDING_COLUMNS} FROM findings WHERE source = ? AND command = ?",
                               (source, command))
        return {row[0]: FindingRow(*row) for row in rows}

    def save_findings(self, source: str, command: str, rows: list[FindingRow]) -> None:
        statement = (f"INSERT OR REPLACE INTO findings (source, command, {FINDING_COLUMNS})"
                     f" VALUES ({', '.join('?' * (len(fields(FindingRow)) + 2))})")
        with _transaction(self.db):
            self.db.executemany(statement, [(source, command, *astuple(row)) for row in rows])

    def accept(self, source: str, command: str, findings: list[tuple[str, str]]) -> None:
        """Mark findings (id, what) as known: they no longer fail CI."""
        with _transaction(self.db):
            self.db.executemany("INSERT OR IGNORE INTO accepted VALUES (?, ?, ?, ?, ?)",
                                [(source, command, fid, what, time.time()) for fid, what in findings])

    def accepted(self, source: str, command: str) -> set[str]:
        rows = self.db.execute("SELECT id FROM accepted WHERE source = ? AND command = ?", (source, command))
        return {fid for (fid,) in rows}


def vars_of(event: JitterEvent) -> dict:
    return {"at": event.at, "pid": event.pid, "command": event.command, "action": event.action, "value": event.value}


def _record(row: tuple) -> RunRecord:
    idx, perturbation, status, exit_code, wall_s, manifest, log_path, log_tail, jitter, trace_path, stragglers = row
    return RunRecord(
        index=idx,
        perturbation=Perturbation.from_json(json.loads(perturbation)),
        status=Status(status),
        exit_code=exit_code,
        wall_s=wall_s,
        manifest=Manifest.from_json(json.loads(zlib.decompress(manifest))) if manifest else None,
        log_path=log_path,
        log_tail=log_tail,
        jitter=tuple(JitterEvent(**e) for e in json.loads(jitter)),
        trace_path=trace_path,
        stragglers=stragglers,
    )


def _require_writable(root: Path, db: Path) -> None:
    """A campaign writes runs as they end: find a read-only store now, not after a build.
    (os.access also sees immutable files and read-only mounts, for root too.)"""
    for path in (root, db, db.with_name(DB_NAME + "-wal"), db.with_name(DB_NAME + "-shm")):
        if path.exists() and not os.access(path, os.W_OK):
            raise StoreError(f"store {path} is read-only; make it writable or use another --store")


def _take_lock(path: Path) -> int:
    """flock the store's lock file; it holds the owner's pid for the message others get."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = _owner(fd)
        os.close(fd)
        raise StoreError(f"store {path.parent} is in use by another buildfuzz campaign or replay (pid {owner}); "
                         "wait for it to end or use another --store") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _owner(fd: int) -> str:
    return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"


def _open_schema(db: sqlite3.Connection, path: Path, wal: bool) -> None:
    """Refuse a newer, damaged or foreign store before writing to it; upgrade an older one."""
    try:
        _check_readable(db, path)
        if wal:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        _migrate(db, path)
    except sqlite3.OperationalError as e:
        if "readonly" in str(e):
            raise StoreError(f"store {path} is read-only and needs an upgrade to schema {VERSION}") from None
        raise StoreError(f"cannot use store {path}: {e}") from None
    except sqlite3.DatabaseError as e:
        raise _damaged(path, str(e)) from None


def _damaged(path: Path, detail: str) -> StoreError:
    return StoreError(f"store {path} is damaged or not a buildfuzz store ({detail}); "
                      "it was left as it is: move it away or use another --store")


def _check_readable(db: sqlite3.Connection, path: Path) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > VERSION:
        raise StoreError(f"store {path} has schema version {version}, written by a newer buildfuzz "
                         f"(this one reads up to {VERSION}); upgrade buildfuzz or use another --store")
    problems = [row[0] for row in db.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise _damaged(path, f"integrity check: {problems[0]}")


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to VERSION in one transaction, and check the result has exactly
    our tables' columns; anything else rolls back, leaving a foreign store untouched."""
    with _transaction(db):  # another process may be migrating the same store
        version = db.execute("PRAGMA user_version").fetchone()[0]
        for migration in MIGRATIONS[version:]:
            for statement in migration:
                db.execute(statement)
        difference = _schema_difference(_shape(db), _expected_shape())
        if difference:
            raise StoreError(f"store {path} has another schema than this buildfuzz's ({difference}); "
                             "it was left as it is: use another --store")
        if version < VERSION:
            db.execute(f"PRAGMA user_version = {VERSION}")


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """All or nothing (the connection commits each statement on its own otherwise)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _shape(db: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Each table's columns as `PRAGMA table_info` gives them (name, type, not null, default, key)."""
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: [tuple(row[1:]) for row in db.execute(f"PRAGMA table_info('{t}')")] for t in tables}


@functools.cache
def _expected_shape() -> dict[str, list[tuple]]:
    db = sqlite3.connect(":memory:")
    for migration in MIGRATIONS:
        for statement in migration:
            db.execute(statement)
    shape = _shape(db)
    db.close()
    return shape


def _schema_difference(actual: dict[str, list[tuple]], expected: dict[str, list[tuple]]) -> str | None:
    """How the first differing table differs from ours; tables we do not use are ignored."""
    for table, columns in expected.items():
        if table not in actual:
            return f"no table {table!r}"
        theirs = {c[0]: c for c in actual[table]}
        ours = {c[0]: c for c in columns}
        notes = [f"lacks column {name!r}" for name in ours if name not in theirs]
        notes += [f"has unknown column {name!r}" for name in theirs if name not in ours]
        notes += [f"defines column {name!r} otherwise" for name in ours if theirs.get(name, ours[name]) != ours[name]]
        if notes:
            return f"table {table!r} " + ", ".join(notes)
    return None
