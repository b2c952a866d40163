"""The minimal reproducer says what it is: a shrunk perturbation, or the reference's own
settings when every rebuild differs (never passed off as a perturbation found)."""

from __future__ import annotations

import itertools

from fuzzer import replay_commands
from fuzzer.campaign import open_stored, run_campaign
from fuzzer.execute.fake import FakeExecutor
from fuzzer.explain import ablation
from fuzzer.plan import Perturbation
from test_campaign_fake import config, fake, one_cpu_differs


def _reproducer(tmp_path, outcome):
    factory, _ = fake()
    report = run_campaign(config(tmp_path), executor_factory=factory).report
    campaign = open_stored(tmp_path / "store", report.campaign)
    try:
        found = ablation.minimal_reproducer(campaign.builds(), FakeExecutor(outcome), Perturbation(8, (1,), 0.7, 42))
        return found, replay_commands.of_perturbation(str(campaign.config.store), campaign.id, campaign.runs[0].perturbation)
    finally:
        campaign.store.close()


def test_a_reproducer_found_by_shrinking_carries_no_note(tmp_path):
    found, reference = _reproducer(tmp_path, one_cpu_differs)
    assert found.command != reference and "--jobs 1 --cpus 1" in found.command and found.note == ""


def test_when_every_rebuild_differs_the_reproducer_says_any_rebuild_reproduces(tmp_path):
    counter = itertools.count()
    found, reference = _reproducer(tmp_path, lambda p: {"out.txt": str(next(counter)), "lib.a": "same"})
    assert found.command == reference
    assert found.note == f"minimal reproducer: {ablation.ANY_REBUILD}"
