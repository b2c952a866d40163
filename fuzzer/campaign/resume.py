"""Opening a campaign: a new one, the one `--resume` continues (only under the settings its
runs were made with), or a stored one to replay or re-localize."""

from __future__ import annotations

from pathlib import Path

import msgspec

from fuzzer import structs
from fuzzer.campaign.state import Campaign
from fuzzer.config import FuzzConfig, StoredConfig, stored_settings
from fuzzer.errors import UsageError
from fuzzer.execute.local import BuildSpec
from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace, output_dirs
from fuzzer.model import available_cpus
from fuzzer.observe import ALGORITHM
from fuzzer.plan import format_cpus
from fuzzer.store import CampaignRow, Store

RESUMABLE_CHANGES = {"runs", "parallel"}  # more or fewer runs, or at once: what a run is stays the same
SETTING_NAMES = {  # stored setting → how the user sets it
    "axes": "--axes/--no-jitter/--no-affinity",
    "artifacts": "--artifact",
    "count_bookkeeping": "--count-bookkeeping",
    "default_ignore": "bookkeeping discounted (no --count-bookkeeping)",
    "workspace": "workspace (the store moved)",
    "cpus": "CPUs available (another machine or affinity)",
}


def open_campaign(config: FuzzConfig, store: Store) -> Campaign:
    """A new campaign, or with --resume the latest one of this source and command."""
    # as JSON gives it back, to compare with what the store holds
    settings = structs.to_data(stored_settings(config, str(_workspace_path(config)), available_cpus()))
    previous = _resumable(config, store) if config.resume else None
    if previous is None:
        cid = store.new_campaign(str(config.source.resolve()), config.command, config.seed, settings)
        return _campaign(config, store, cid, config.seed, [])
    _refuse_changed_settings(previous, settings)
    store.update_config(previous.id, settings)  # what now runs: a changed --runs, settings older stores lack
    return _campaign(config, store, previous.id, previous.seed, store.runs(previous.id))


def open_stored(store_path: Path, campaign_id: int | None) -> Campaign:
    """A stored campaign, ready for replay or re-localization. It holds the store's lock
    (both build in the store's workspace); the caller closes `campaign.store`."""
    store = Store(store_path, exclusive=True)
    try:
        row = store.require_campaign(campaign_id)
        config = _stored(row).config(row.source, row.command, row.seed, store_path)
        _check_rebuildable(row, config)
        return _campaign(config, store, row.id, row.seed, store.runs(row.id))
    except BaseException:
        store.close()
        raise


def _stored(row: CampaignRow) -> StoredConfig:
    try:
        return structs.convert(row.config, StoredConfig)
    except msgspec.ValidationError as e:
        raise UsageError(f"campaign {row.id}'s stored settings cannot be read: {e}") from None


def _check_rebuildable(row: CampaignRow, config: FuzzConfig) -> None:
    """A replay must build the same source at the same path as the campaign's runs did."""
    if not config.source.is_dir():
        raise UsageError(f"campaign {row.id} built {row.source}, which is no longer a directory")
    recorded = row.config.get("workspace")
    if recorded is not None and recorded != str(_workspace_path(config)):
        raise UsageError(f"campaign {row.id} built in {recorded}, this store would build in "
                         f"{_workspace_path(config)} (the store moved): a build that records its path would differ")


def _resumable(config: FuzzConfig, store: Store) -> CampaignRow | None:
    """The latest campaign, for --resume to continue; None if it ran to its end (a new one starts)."""
    previous = store.campaign()
    if previous is None or previous.source != str(config.source.resolve()) or previous.command != config.command:
        raise UsageError(f"--resume: no campaign for this source and command in {config.store}")
    return previous if previous.finished is None else None


def _refuse_changed_settings(previous: CampaignRow, settings: dict) -> None:
    """Runs made under other settings must not be compared as one campaign's runs."""
    said = RESUMABLE_CHANGES | ({"default_ignore"} if "count_bookkeeping" in previous.config else set())
    changed = [key for key, value in settings.items()
               if key not in said and key in previous.config and previous.config[key] != value]
    if changed:
        differences = "; ".join(
            f"{SETTING_NAMES.get(key, '--' + key.replace('_', '-'))} {_shown(key, previous.config[key])} "
            f"→ {_shown(key, settings[key])}" for key in changed)
        raise UsageError(f"--resume: campaign {previous.id} ran with other settings ({differences}); "
                         "resume with its settings, or drop --resume to start a new campaign")


def _refuse_other_hashes(cid: int, runs: list[RunRecord]) -> None:
    """New builds are hashed with this buildfuzz's digests: runs hashed otherwise (by an older
    buildfuzz) would differ from them in every file. Their report stays readable (`explain`)."""
    other = next((r.manifest.algorithm for r in runs if r.manifest and r.manifest.algorithm != ALGORITHM), None)
    if other is not None:
        raise UsageError(f"campaign {cid}'s runs were hashed with {other} by an older buildfuzz: builds hashed now "
                         f"({ALGORITHM}) cannot be compared with them; `buildfuzz explain` still shows its report, "
                         "a new campaign (without --resume) builds again")


def _shown(key: str, value) -> str:
    if key == "jobs":
        return f"{value[0]}-{value[1]}"
    if key == "cpus":
        return format_cpus(value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def _workspace_path(config: FuzzConfig) -> Path:
    """The one path every run of a campaign, and every replay of it, builds at."""
    source = config.source.resolve()
    return source if config.in_place else config.store.resolve() / "workspace" / (source.name or "tree")


def _campaign(config: FuzzConfig, store: Store, cid: int, seed: int, runs: list[RunRecord]) -> Campaign:
    _refuse_other_hashes(cid, runs)
    workspace = Workspace(config.source.resolve(), _workspace_path(config), config.clean,
                          frozenset({config.store.resolve()}), parent_outputs=not config.in_place,
                          outputs=output_dirs(config.output_dirs))
    spec = BuildSpec(config.command, workspace, store.campaign_dir(cid) / "logs", config.timeout)
    campaign = Campaign(config, store, cid, seed, spec)
    for record in runs:
        campaign.add_run(record)
    return campaign
