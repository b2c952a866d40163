"""The store's schema: the statements that build it version by version (`PRAGMA
user_version`), and the checks that refuse a store that is newer, damaged or foreign
before anything is written to it."""

from __future__ import annotations

import functools
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from fuzzer.errors import UsageError

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
    (  # why each run was in the plan (fuzzer.model.Reason); "" for runs stored before
        "ALTER TABLE runs ADD COLUMN reason TEXT NOT NULL DEFAULT ''",
    ),
    (
        # each campaign's count of a finding (k of n builds): the memory pools them over nights
        """CREATE TABLE finding_counts (
            source TEXT NOT NULL,
            command TEXT NOT NULL,
            id TEXT NOT NULL,
            campaign INTEGER NOT NULL,
            seen INTEGER NOT NULL,
            builds INTEGER NOT NULL,
            PRIMARY KEY (source, command, id, campaign)
        )""",
        # `buildfuzz bisect`: each commit judged, so an interrupted bisection resumes
        """CREATE TABLE bisect_steps (
            bisection TEXT NOT NULL,
            rev TEXT NOT NULL,
            verdict TEXT NOT NULL,
            tries INTEGER NOT NULL,
            shown INTEGER NOT NULL,
            detail TEXT NOT NULL,
            PRIMARY KEY (bisection, rev)
        )""",
    ),
    (  # the step audit's rotation across nights (fuzzer/explain/audit.py): each step's last audit
        """CREATE TABLE step_audits (
            source TEXT NOT NULL,
            command TEXT NOT NULL,
            step TEXT NOT NULL,
            audited TEXT NOT NULL,
            campaign INTEGER NOT NULL,
            result TEXT NOT NULL,
            PRIMARY KEY (source, command, step)
        )""",
    ),
    (  # how each run's content digests were made (fuzzer.observe.ALGORITHM); runs stored before: sha256
        "ALTER TABLE runs ADD COLUMN hashes TEXT NOT NULL DEFAULT 'sha256'",
    ),
]
VERSION = len(MIGRATIONS)


class StoreError(UsageError):
    """A store that cannot be used as asked: missing, newer, damaged, foreign, read-only
    or in use. Raised when the store is opened, before any build runs."""


def open_schema(db: sqlite3.Connection, path: Path, wal: bool) -> None:
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
    with transaction(db):  # another process may be migrating the same store
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
def transaction(db: sqlite3.Connection) -> Iterator[None]:
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
