"""The step audit's phase (`--check-steps`): after the builds are compared, before
localization, in a workspace of its own; its culprits join the localization's, and its
budget is localization's too (one budget for both: 3 builds' time by default)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from fuzzer import explain
from fuzzer.campaign.state import Campaign, Events, with_own_executor
from fuzzer.explain.audit_run import AuditOutcome, run_audit
from fuzzer.explain.budget import localization_budget
from fuzzer.model import AuditedStep, Verdict

LOCALIZATION_BUILDS = 1


def audit_steps(campaign: Campaign, events: Events) -> AuditOutcome | None:
    config = campaign.config
    if config.check_steps is None:
        return None
    budget = localization_budget(config.localize_budget_s, campaign.seconds_left(), campaign.runs[0].wall_s)
    last_audits = campaign.store.last_audits(str(config.source), config.command)
    # localization's traced rerun comes out of the same budget (its reference is the audit's
    # when the audit classified the roots)
    reserve = LOCALIZATION_BUILDS if config.localize else 0

    def audit(executor):
        outcome = run_audit(campaign.builds(), executor, budget, config.check_steps, last_audits, reserve)
        kept = kept_tree(campaign)
        if config.localize and outcome.reference is not None and executor.set_aside(outcome.reference, kept):
            outcome = replace(outcome, kept_tree=kept)  # localization replays in it, not in a tree traced again
        return outcome

    outcome = with_own_executor(campaign, "audit", events, audit)
    if outcome is not None:
        _remember(campaign, outcome.summary.steps)
    return outcome


def kept_tree(campaign: Campaign) -> Path:
    """Where the audit's traced tree waits for localization (its parent holds the tree's
    parent outputs too); `drop_kept_tree` removes what localization did not take back."""
    return campaign.dir / "audit-reference" / campaign.spec.workspace.path.name


def drop_kept_tree(campaign: Campaign) -> None:
    shutil.rmtree(kept_tree(campaign).parent, ignore_errors=True)


def _remember(campaign: Campaign, rows: list[AuditedStep]) -> None:
    """Steps replayed to the end are audited as of when their replays ended (to the
    microsecond: the next night starts with the first this one audited); a failed replay
    checked nothing."""
    done = [(r.identity, r.audited, r.result) for r in rows if r.result.replayed]
    if done:
        campaign.store.save_audits(str(campaign.config.source), campaign.config.command, campaign.id, done)


def with_audit(localization: explain.Localization | None, outcome: AuditOutcome | None) -> explain.Localization | None:
    """The localization with the audit's culprits (a step both found is the localization's)
    and its summary."""
    if outcome is None:
        return localization
    localization = localization or explain.Localization(traced=True)
    known = {(c.command, c.cwd) for c in localization.culprits}
    added = tuple(c for c in outcome.culprits if (c.command, c.cwd) not in known)
    return replace(localization, culprits=localization.culprits + added, notes=localization.notes + outcome.notes,
                   audit=outcome.summary, budget_s=localization.budget_s or outcome.budget.seconds)


def audited_verdict(builds: Verdict, localization: explain.Localization | None) -> Verdict:
    """The builds' verdict; a step the audit saw vary makes matching builds unreproducible:
    its replays are the evidence (fuzzer/explain/audit_run.py)."""
    if builds == Verdict.REPRODUCIBLE and localization is not None and localization.audit and localization.audit.roots:
        return Verdict.UNREPRODUCIBLE
    return builds
