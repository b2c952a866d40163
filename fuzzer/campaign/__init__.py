"""The campaign: plan → execute → observe → compare → explain → report, in named phases.

`run_campaign(config, events)` returns an `Outcome` and never prints; the CLI passes
an `Events` object that renders progress. Every run is stored the moment it ends, so
an interrupted campaign loses nothing and `--resume` continues it.

- `state`: what the phases share (`Campaign`), the `Outcome` and the verdict;
- `resume`: opening a campaign, new, resumed or stored;
- `explore`: the reference and the schedule;
- `conclude`: compare, localize, store the report;
- `reporting`: the report stage's plain facts, and its one assembly;
- `evidence`: the reference tree and the kept variants that diffs read;
- `stored`: a stored campaign's report shown or remade, its findings accepted or
  written as a baseline.
"""

from __future__ import annotations

from fuzzer import axes
from fuzzer.campaign.conclude import conclude
from fuzzer.campaign.explore import explore
from fuzzer.campaign.resume import open_campaign, open_stored
from fuzzer.campaign.state import SILENT, Campaign, Events, ExecutorFactory, Outcome, timed
from fuzzer.config import FuzzConfig, validate
from fuzzer.execute import choose
from fuzzer.execute.executor import Executor
from fuzzer.model import ExitReason
from fuzzer.store import Store

__all__ = ["Campaign", "Events", "Outcome", "SILENT", "conclude", "open_stored", "run_campaign"]


def run_campaign(config: FuzzConfig, events: Events = SILENT, executor_factory: ExecutorFactory | None = None,
                 settings: dict | None = None) -> Outcome:
    """`executor_factory`: where builds run (tests pass a fake); by default from the config.
    `settings`: each setting and where it came from, for the report (the stored one too)."""
    config = validate(config)
    axes.require_runs(config.runs, axes.variation_axes(config.axes))
    executor_factory = executor_factory or choose.executor_factory(config)
    # held until the report is written: a second campaign on this store would build in the same workspace
    store = Store(config.store, create=True, exclusive=True)
    try:
        campaign = open_campaign(config, store)
        campaign.executor_factory = executor_factory
        campaign.settings = settings or {}
        try:
            events.started(campaign.id, campaign.seed, store.root, campaign.spec.workspace.path, len(campaign.runs))
            executor = executor_factory(campaign.spec)
            return _phases(campaign, executor, events)
        finally:
            store.drop_if_empty(campaign.id)
    finally:
        store.close()


def _phases(campaign: Campaign, executor: Executor, events: Events) -> Outcome:
    try:
        with timed(campaign, "explore", events):
            explore(campaign, executor, events)
    except KeyboardInterrupt:  # no phase after it runs: the builds left are `--resume`'s
        campaign.exit_reason, campaign.interrupted_in = ExitReason.INTERRUPTED, "explore"
    finally:
        executor.close()
        campaign.spec.workspace.remove()
    return conclude(campaign, events)
