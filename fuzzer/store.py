"""store: every campaign's configuration, runs, manifests and report, in SQLite (WAL).

A run is committed the moment it ends, so a campaign killed at any point resumes
from its last complete run without repeating or losing any (`--resume`).
Manifests are stored zlib-compressed as JSON: a tree's file list compresses ~10×.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from fuzzer.execute.jitter import JitterEvent
from fuzzer.execute.local import RunRecord, Status
from fuzzer.observe import Manifest
from fuzzer.plan import Perturbation

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    source TEXT NOT NULL,
    command TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config TEXT NOT NULL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS runs (
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
);
CREATE TABLE IF NOT EXISTS reports (
    campaign INTEGER PRIMARY KEY REFERENCES campaigns(id),
    written REAL NOT NULL,
    report TEXT NOT NULL
);
"""


class StoreError(Exception):
    pass


@dataclass(frozen=True)
class CampaignRow:
    id: int
    source: str
    command: str
    seed: int
    config: dict
    finished: float | None


class Store:
    def __init__(self, root: Path):
        # absolute: builds (and strace's -o) run with the workspace as their cwd
        self.root = root.absolute()
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(root / "buildfuzz.sqlite", timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"cannot use store {root}: {e}") from None

    def close(self) -> None:
        self.db.close()

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
