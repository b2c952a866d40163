"""store: every campaign's configuration, runs, manifests and report, in SQLite (WAL).

A run is committed the moment it ends, so a campaign killed at any point resumes
from its last complete run without repeating or losing any (`--resume`).
The schema is versioned (`PRAGMA user_version`, upgraded by `migrations.MIGRATIONS`); a
store that is newer, damaged, foreign or read-only is refused when opened, before any
build. A campaign or replay holds `<store>/lock` (flock) while it runs: they share the
workspace. `queries` holds the `Store` and its rows.
"""

from fuzzer.store.migrations import MIGRATIONS, VERSION, StoreError
from fuzzer.store.queries import DB_NAME, CampaignRow, FindingRow, Store

__all__ = ["DB_NAME", "MIGRATIONS", "VERSION", "CampaignRow", "FindingRow", "Store", "StoreError"]
