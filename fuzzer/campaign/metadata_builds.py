"""Builds at the reference's settings for explain/artifact_metadata.py, which tests the
usual stabiliser (SOURCE_DATE_EPOCH) of artifacts that differ only in metadata."""

from __future__ import annotations

import time
from dataclasses import replace

from fuzzer.campaign.state import Campaign
from fuzzer.execute.run import RunKind, RunRecord
from fuzzer.explain import artifact_metadata
from fuzzer.report.build import Diff


def test_metadata_stabilizer(campaign: Campaign, diffs: dict[str, Diff]) -> artifact_metadata.Tested:
    """On the artifacts the diffs saw differ only in metadata."""
    if not campaign.config.localize or not campaign.runs or campaign.interrupted_in:
        return artifact_metadata.Tested()
    return artifact_metadata.test_stabilizer({path: diff.inside for path, diff in diffs.items()}, campaign.runs[0],
                                             campaign.seconds_left(), lambda envs, spacing: _builds(campaign, envs, spacing))


def _builds(campaign: Campaign, envs: list[tuple[tuple[str, str], ...]], spacing_s: float) -> list[RunRecord]:
    """One build per environment at the reference's settings, started `spacing_s` apart."""
    executor = campaign.executor_factory(campaign.spec)
    records = []
    try:
        for env in envs:
            started = time.monotonic()
            request = replace(campaign.request(RunKind.METADATA, campaign.runs[0].perturbation), env=env)
            records.append(executor.run(request))
            time.sleep(max(0.0, spacing_s - (time.monotonic() - started)))
    finally:
        executor.close()
        campaign.spec.workspace.remove()
    return records
