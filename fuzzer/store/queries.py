"""The store's queries: campaigns, their runs (manifests zlib-compressed JSON: a tree's
file list compresses ~10×) and reports, the memory across campaigns, and the lock a
campaign or replay holds while it builds in the store's workspace."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
import zlib
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Iterator

from fuzzer import structs
from fuzzer.config import MAX_INT
from fuzzer.execute.jitter import JitterEvent
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.observe import ALGORITHM, Entries, Manifest
from fuzzer.plan import Perturbation
from fuzzer.store.migrations import StoreError, open_schema, transaction

DB_NAME = "buildfuzz.sqlite"
LOCK_NAME = "lock"


@dataclass(frozen=True)
class CampaignRow:
    id: int
    source: str
    command: str
    seed: int
    config: dict
    finished: float | None
    created: float  # seconds since the epoch, when the campaign began


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
                _ignore_in_git(self.root)
            if exclusive:
                _require_writable(self.root, self.path)
                self._lock = _take_lock(self.root / LOCK_NAME)
            self.db = sqlite3.connect(f"{self.path.as_uri()}?mode={'rwc' if create else 'rw'}", uri=True,
                                      timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            self._unlock()
            raise StoreError(f"cannot use store {root}: {e}") from None
        try:
            open_schema(self.db, self.path, wal=exclusive)
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
        query = "SELECT id, source, command, seed, config, finished, created FROM campaigns"
        row = (
            self.db.execute(query + " WHERE id = ?", (campaign,)).fetchone()
            if campaign is not None
            else self.db.execute(query + " ORDER BY id DESC LIMIT 1").fetchone()
        )
        if row is None:
            return None
        return CampaignRow(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6])

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
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                campaign,
                record.index,
                label,
                structs.encode(record.perturbation).decode(),  # TEXT, as the column says
                record.status.value,
                record.exit_code,
                record.wall_s,
                manifest.digest() if manifest else None,
                zlib.compress(structs.encode(manifest.entries)) if manifest else None,
                record.log_path,
                record.log_tail,
                json.dumps([vars_of(e) for e in record.jitter]),
                record.trace_path,
                record.stragglers,
                record.reason,
                manifest.algorithm if manifest else ALGORITHM,
            ),
        )

    def runs(self, campaign: int, label: str = "") -> list[RunRecord]:
        rows = self.db.execute(
            "SELECT idx, perturbation, status, exit_code, wall_s, manifest, log_path, log_tail, jitter,"
            " trace_path, stragglers, reason, hashes FROM runs WHERE campaign = ? AND label = ? ORDER BY idx",
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
        with transaction(self.db):
            self.db.execute("DELETE FROM remembered_runs WHERE campaign = ?", (campaign,))
            rows = [(campaign, i, structs.encode(p).decode(), origin) for i, (p, origin) in enumerate(chosen)]
            self.db.executemany("INSERT INTO remembered_runs VALUES (?, ?, ?, ?)", rows)

    def remembered(self, campaign: int) -> list[tuple[Perturbation, int]]:
        rows = self.db.execute("SELECT perturbation, origin FROM remembered_runs WHERE campaign = ? ORDER BY position",
                               (campaign,))
        return [(structs.decode(p, Perturbation), origin) for p, origin in rows]

    def findings(self, source: str, command: str) -> dict[str, FindingRow]:
        rows = self.db.execute(f"SELECT {FINDING_COLUMNS} FROM findings WHERE source = ? AND command = ?",
                               (source, command))
        return {row[0]: FindingRow(*row) for row in rows}

    def save_findings(self, source: str, command: str, rows: list[FindingRow]) -> None:
        statement = (f"INSERT OR REPLACE INTO findings (source, command, {FINDING_COLUMNS})"
                     f" VALUES ({', '.join('?' * (len(fields(FindingRow)) + 2))})")
        with transaction(self.db):
            self.db.executemany(statement, [(source, command, *astuple(row)) for row in rows])

    def save_counts(self, source: str, command: str, campaign: int, counts: list[tuple[str, int, int]]) -> None:
        """A campaign's (id, seen, builds) per finding; concluding again replaces its own counts."""
        with transaction(self.db):
            self.db.executemany("INSERT OR REPLACE INTO finding_counts VALUES (?, ?, ?, ?, ?, ?)",
                                [(source, command, fid, campaign, seen, builds) for fid, seen, builds in counts])

    def pooled_counts(self, source: str, command: str) -> dict[str, tuple[int, int, int]]:
        """Finding id → (seen, builds, campaigns), summed over every campaign that counted it."""
        rows = self.db.execute("SELECT id, SUM(seen), SUM(builds), COUNT(*) FROM finding_counts"
                               " WHERE source = ? AND command = ? GROUP BY id", (source, command))
        return {fid: (seen, builds, campaigns) for fid, seen, builds, campaigns in rows}

    def finding_anywhere(self, finding_id: str) -> tuple[str, str, str, str] | None:
        """(source, command, kind, what) of a finding under any source and command (the latest seen)."""
        return self.db.execute("SELECT source, command, kind, what FROM findings WHERE id = ?"
                               " ORDER BY last_campaign DESC LIMIT 1", (finding_id,)).fetchone()

    def reports_of(self, source: str, command: str) -> Iterator[tuple[int, dict]]:
        """Every stored report of this source and command, latest first."""
        return self.reports_before(source, command, MAX_INT)

    def latest_report_of(self, source: str) -> tuple[str, dict] | None:
        """(command, report) of the latest campaign of `source` that has a report."""
        row = self.db.execute("SELECT c.command, r.report FROM campaigns c JOIN reports r ON r.campaign = c.id"
                              " WHERE c.source = ? ORDER BY c.id DESC LIMIT 1", (source,)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def save_bisect_step(self, bisection: str, rev: str, verdict: str, tries: int, shown: int, detail: str) -> None:
        with transaction(self.db):
            self.db.execute("INSERT OR REPLACE INTO bisect_steps VALUES (?, ?, ?, ?, ?, ?)",
                            (bisection, rev, verdict, tries, shown, detail))

    def bisect_steps(self, bisection: str) -> dict[str, tuple[str, int, int, str]]:
        """rev → (verdict, tries, times shown, detail) of each commit a bisection judged."""
        rows = self.db.execute("SELECT rev, verdict, tries, shown, detail FROM bisect_steps WHERE bisection = ?",
                               (bisection,))
        return {rev: (verdict, tries, shown, detail) for rev, verdict, tries, shown, detail in rows}

    def accept(self, source: str, command: str, findings: list[tuple[str, str]]) -> None:
        """Mark findings (id, what) as known: they no longer fail CI."""
        with transaction(self.db):
            self.db.executemany("INSERT OR IGNORE INTO accepted VALUES (?, ?, ?, ?, ?)",
                                [(source, command, fid, what, time.time()) for fid, what in findings])

    def accepted(self, source: str, command: str) -> set[str]:
        rows = self.db.execute("SELECT id FROM accepted WHERE source = ? AND command = ?", (source, command))
        return {fid for (fid,) in rows}


    def last_audits(self, source: str, command: str) -> dict[str, str]:
        """Step identity → when a step audit last replayed it (ISO time)."""
        rows = self.db.execute("SELECT step, audited FROM step_audits WHERE source = ? AND command = ?",
                               (source, command))
        return dict(rows.fetchall())

    def save_audits(self, source: str, command: str, campaign: int, audited: list[tuple[str, str, str]]) -> None:
        """Each (step identity, ISO time, result) the audit replayed."""
        with transaction(self.db):
            self.db.executemany("INSERT OR REPLACE INTO step_audits VALUES (?, ?, ?, ?, ?, ?)",
                                [(source, command, step, when, campaign, result) for step, when, result in audited])


def vars_of(event: JitterEvent) -> dict:
    return {"at": event.at, "pid": event.pid, "command": event.command, "action": event.action, "value": event.value}


def _record(row: tuple) -> RunRecord:
    idx, perturbation, status, exit_code, wall_s, manifest, log_path, log_tail, jitter, trace_path, stragglers, reason, \
        hashes = row
    return RunRecord(
        index=idx,
        perturbation=structs.decode(perturbation, Perturbation),
        status=RunStatus(status),
        exit_code=exit_code,
        wall_s=wall_s,
        manifest=Manifest(structs.decode(zlib.decompress(manifest), Entries), hashes) if manifest else None,
        log_path=log_path,
        log_tail=log_tail,
        jitter=tuple(JitterEvent(**e) for e in json.loads(jitter)),
        trace_path=trace_path,
        stragglers=stragglers,
        reason=reason,
    )


def _ignore_in_git(root: Path) -> None:
    """A store the user put inside a work tree stays out of `git status` and `git add -A`."""
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")


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
