"""The memory across campaigns: stable finding ids, new/still/fixed across campaigns of
one store, what diverged before replayed first, baselines and accepted findings.

Campaigns run on the FakeExecutor (milliseconds); one slow test does it all on a real build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import xml.etree.ElementTree as ET
from contextlib import closing
from dataclasses import replace

import pytest
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import findings, memory, structs
from fuzzer.campaign import run_campaign, stored
from fuzzer.config import FuzzConfig
from fuzzer.errors import UsageError
from fuzzer.execute.fake import FakeExecutor
from fuzzer.findings import FIXED, NEW, STILL, Identity
from fuzzer.plan import Perturbation
from fuzzer.report import baseline, html, json_format, junit, markdown, text
from fuzzer.store import DB_NAME, MIGRATIONS, VERSION, FindingRow, Store

from conftest import buildfuzz, buildfuzz_in_process, make_project
from report_samples import unreproducible


pytestmark = pytest.mark.needs("2 cpus")  # the builds differ by CPU count


def one_cpu_differs(p: Perturbation) -> dict[str, str]:
    return {"out.txt": "y" if p.ncpus == 1 else "x", "lib.a": "same"}


def all_same(p: Perturbation) -> dict[str, str]:
    return {"out.txt": "x", "lib.a": "same"}


def jitter_differs(p: Perturbation) -> dict[str, str]:
    return {"out.txt": "x", "lib.a": "j" if p.jitter else "same"}


def both_differ(p: Perturbation) -> dict[str, str]:
    return {**one_cpu_differs(p), "lib.a": jitter_differs(p)["lib.a"]}


class OnePerturbation:
    """A bug that only one exact perturbation shows: the one built at index `at` in the
    first campaign that calls this (another seed would practically never draw it)."""

    def __init__(self, at: int):
        self.at, self.built, self.trigger = at, 0, None

    def __call__(self, p: Perturbation) -> dict[str, str]:
        if self.built == self.at:
            self.trigger = p
        self.built += 1
        return {"out.txt": "y" if p == self.trigger else "x"}


def interrupted_at(build: int, outcome):
    """`outcome`, until Ctrl-C arrives during build number `build` (1 is the reference)."""
    built = []

    def interrupted(p: Perturbation):
        built.append(p)
        if len(built) == build:
            raise KeyboardInterrupt
        return outcome(p)

    return interrupted


def config(tmp_path, **overrides) -> FuzzConfig:
    source = tmp_path / "src"
    source.mkdir(parents=True, exist_ok=True)
    # the schedule axes only: order axes come and go with the tools installed (disorderfs, make 4.4)
    base = FuzzConfig(source=source, command="make -j{jobs}", store=tmp_path / "store", runs=8, seed=3,
                      jobs=(1, 8), axes=("jobs", "cpus", "jitter"), localize=False)
    return replace(base, **overrides)


def campaign(tmp_path, outcome, slots: int = 1, **overrides):
    """One campaign on the FakeExecutor: its outcome and the executor (what it was asked to build)."""
    made = []

    def factory(spec):
        made.append(FakeExecutor(outcome, slots=slots))
        return made[-1]

    return run_campaign(config(tmp_path, **overrides), executor_factory=factory), made[0]


def by_what(report) -> dict:
    return {f.what: f for f in report.findings}


def stored_findings(tmp_path) -> dict[str, FindingRow]:
    store = Store(tmp_path / "store")
    try:
        return {row.what: row for row in store.findings(str((tmp_path / "src").resolve()), "make -j{jobs}").values()}
    finally:
        store.close()


def remembered(tmp_path, campaign_id: int) -> list[Perturbation]:
    store = Store(tmp_path / "store")
    try:
        return [p for p, _ in store.remembered(campaign_id)]
    finally:
        store.close()


# --- statuses across campaigns -----------------------------------------------------------


def test_a_finding_is_new_then_still_then_fixed_then_new_again(tmp_path):
    first, _ = campaign(tmp_path, one_cpu_differs, seed=3)
    (finding,) = first.report.findings
    assert (finding.what, finding.kind, finding.status, finding.first_campaign) == ("out.txt", "artifact", NEW, 1)
    assert first.report.divergent_artifacts[0].finding_id == finding.id

    second, _ = campaign(tmp_path, one_cpu_differs, seed=5)
    assert [(f.id, f.status, f.first_campaign, f.last_campaign) for f in second.report.findings] == [
        (finding.id, STILL, 1, 2)]

    fixed, _ = campaign(tmp_path, all_same, seed=7)
    assert (fixed.report.verdict, fixed.exit_code) == ("reproducible", 0)
    assert [(f.id, f.status, f.last_campaign) for f in fixed.report.findings] == [(finding.id, FIXED, 2)]
    assert stored_findings(tmp_path)["out.txt"].status == FIXED

    back, _ = campaign(tmp_path, one_cpu_differs, seed=9)
    (again,) = back.report.findings
    assert (again.status, again.first_campaign, again.last_campaign) == (NEW, 1, 4)  # a regression is news


def test_a_campaign_that_compared_other_files_does_not_call_a_finding_fixed(tmp_path):
    campaign(tmp_path, one_cpu_differs)
    narrower, _ = campaign(tmp_path, all_same, seed=5, artifacts=("lib.a",))
    assert narrower.report.reproducible and narrower.report.findings == []
    assert stored_findings(tmp_path)["out.txt"].status == NEW
    same_files, _ = campaign(tmp_path, all_same, seed=6)
    assert [f.status for f in same_files.report.findings] == [FIXED]


def test_only_a_campaign_with_a_verdict_and_all_its_builds_changes_statuses(tmp_path):
    campaign(tmp_path, one_cpu_differs)
    before = stored_findings(tmp_path)
    stopped, _ = campaign(tmp_path, interrupted_at(3, one_cpu_differs), seed=5)
    # its second build differed: a verdict, but its builds were cut, so nothing is recorded
    assert stopped.exit_code == 1 and [f.status for f in stopped.report.findings] == [STILL]  # shown, not kept
    assert stored_findings(tmp_path) == before
    resumed, _ = campaign(tmp_path, all_same, seed=5, resume=True)
    assert resumed.report.campaign == stopped.report.campaign and resumed.exit_code == 1  # its early runs differed
    reference_failed, _ = campaign(tmp_path, lambda p: None, seed=6)
    assert reference_failed.exit_code == 3 and reference_failed.report.findings == []
    assert stored_findings(tmp_path)["out.txt"].last_campaign == stopped.report.campaign


def sighting(campaign_id: int, *kinds: str) -> memory.Sighting:
    return memory.Sighting(campaign_id, 1000.0 + campaign_id, "scope", True, frozenset(kinds))


def row(kind: str, campaign_id: int = 1, status: str = NEW) -> FindingRow:
    return FindingRow(f"{kind[:4]}00000000"[:12], kind, kind, "scope", status, campaign_id, campaign_id, 1.0,
                      campaign_id, 1.0)


@pytest.mark.parametrize("kinds, fixed", [
    ((findings.ARTIFACT, findings.FAILURE), {"artifact", "failure"}),  # untraced: says nothing of steps
    ((findings.ARTIFACT, findings.FAILURE, findings.CULPRIT, findings.HAZARD), {"artifact", "failure", "culprit",
                                                                                "hazard"}),
])
def test_only_what_a_campaign_could_see_is_called_fixed(kinds, fixed):
    stored = {r.id: r for r in map(row, ("artifact", "failure", "culprit", "hazard"))}
    changed = memory.updated(stored, [], sighting(2, *kinds))
    assert {r.kind for r in changed.values() if r.status == FIXED} == fixed


def test_an_earlier_campaign_concluded_again_changes_nothing_a_later_one_said():
    later = row("artifact", campaign_id=3, status=STILL)
    identity = Identity(later.id, later.kind, later.what)
    assert memory.updated({later.id: later}, [identity], sighting(2, "artifact"))[later.id] == later
    assert memory.updated({later.id: later}, [], sighting(2, "artifact")) == {}


def test_concluding_the_same_campaign_again_keeps_its_statuses():
    identity = Identity("0123456789ab", "artifact", "out.txt")
    first = memory.updated({}, [identity], sighting(4, "artifact"))
    again = memory.updated(first, [identity], sighting(4, "artifact"))
    assert again[identity.id].status == first[identity.id].status == NEW


# --- what diverged before runs first ------------------------------------------------------


def test_what_diverged_before_is_built_right_after_the_reference(tmp_path):
    bug = OnePerturbation(at=5)
    first, _ = campaign(tmp_path / "a", bug, seed=3)
    assert [r.index for r in first.report.runs if r.group == "B"] == [5] and bug.trigger.jitter
    without_memory, _ = campaign(tmp_path / "b", bug, seed=4)
    assert without_memory.report.reproducible  # another seed never draws that perturbation
    second, executor = campaign(tmp_path / "a", bug, seed=4)
    assert executor.requests[1].perturbation == bug.trigger
    assert [r.index for r in second.report.runs if r.group == "B"][0] == 1  # found at build 2
    assert len(second.report.runs) == 8  # the memory takes runs from the schedule, not on top of it
    assert "run 1 replayed what diverged or failed in campaign 1" in " ".join(second.report.notes)


def test_a_resumed_campaign_replays_the_plan_it_started_with(tmp_path):
    campaign(tmp_path, one_cpu_differs, seed=3)
    shutil.copytree(tmp_path / "store", tmp_path / "copy")
    whole, _ = campaign(tmp_path, one_cpu_differs, seed=5, store=tmp_path / "copy")
    campaign(tmp_path, interrupted_at(3, one_cpu_differs), seed=5)
    resumed, _ = campaign(tmp_path, one_cpu_differs, seed=5, resume=True)
    assert [r.perturbation for r in resumed.report.runs] == [r.perturbation for r in whole.report.runs]
    assert structs.convert(whole.report.runs[1].perturbation, Perturbation) in remembered(tmp_path, 2)


def test_remembered_runs_are_few_distinct_and_latest_first(tmp_path):
    campaign(tmp_path, jitter_differs, seed=3, runs=20)
    campaign(tmp_path, one_cpu_differs, seed=4, runs=20)
    campaign(tmp_path, all_same, seed=5, runs=20)
    chosen = remembered(tmp_path, 3)
    assert len(chosen) == memory.REMEMBERED and len(set(chosen)) == len(chosen)
    latest = list(dict.fromkeys(structs.convert(r["perturbation"], Perturbation) for r in _stored_report(tmp_path, 2)["runs"]
                                if r["group"] != "A"))
    assert latest and chosen[:len(latest)] == latest[:memory.REMEMBERED]  # campaign 2's first, in run order
    assert remembered(tmp_path, 1) == []  # nothing before the first campaign


def _stored_report(tmp_path, campaign_id: int) -> dict:
    store = Store(tmp_path / "store")
    try:
        return store.report(campaign_id)
    finally:
        store.close()


def test_only_what_this_campaign_could_build_is_replayed(tmp_path):
    campaign(tmp_path, jitter_differs, seed=3)
    no_jitter, _ = campaign(tmp_path, all_same, seed=4, axes=("jobs", "cpus"))
    assert remembered(tmp_path, 2) == [] and not any("replayed" in n for n in no_jitter.report.notes)


@pytest.mark.parametrize("look_back, found", [(2, False), (3, True)])
def test_only_the_latest_reports_are_read(tmp_path, monkeypatch, look_back, found):
    monkeypatch.setattr(memory, "LOOK_BACK", look_back)
    campaign(tmp_path, one_cpu_differs, seed=3)
    for seed in (4, 5):  # one CPU is out of their space: they neither replay nor clear campaign 1's runs
        campaign(tmp_path, all_same, seed=seed, axes=("jobs", "jitter"))
    campaign(tmp_path, all_same, seed=6)
    assert bool(remembered(tmp_path, 4)) == found


def test_a_perturbation_that_no_longer_diverges_is_forgotten(tmp_path):
    campaign(tmp_path, one_cpu_differs, seed=3)
    fixed, executor = campaign(tmp_path, all_same, seed=4)
    replayed = remembered(tmp_path, 2)
    assert replayed and [r.perturbation for r in executor.requests[1:1 + len(replayed)]] == replayed
    campaign(tmp_path, all_same, seed=5)
    assert remembered(tmp_path, 3) == []


# --- stable identities ---------------------------------------------------------------------


def test_ids_are_the_same_whatever_the_seed_and_the_run_order(tmp_path):
    one, _ = campaign(tmp_path / "a", both_differ, seed=3, slots=1)
    other, _ = campaign(tmp_path / "b", both_differ, seed=11, slots=3)
    assert {(f.id, f.what) for f in one.report.findings} == {(f.id, f.what) for f in other.report.findings}
    assert len(one.report.findings) == 2


def test_builds_failing_alike_are_one_finding_with_a_stable_junit_name(tmp_path):
    def one_cpu_fails(p):
        return None if p.ncpus == 1 else all_same(p)

    names = []
    for seed in (3, 9):
        outcome, _ = campaign(tmp_path, one_cpu_fails, seed=seed)
        failed = [r for r in outcome.report.runs if r.status != "ok"]
        assert len(failed) >= 1 and len({r.finding_id for r in failed}) == 1
        assert [f.what for f in outcome.report.findings] == ["build failed"]
        names.append(sorted(c.get("name") for c in _junit_cases(outcome.report)))
    assert names[0] == names[1] and not any(re.search(r"\d", name) for name in names[0])  # no run numbers


@settings(max_examples=50, deadline=None)
@given(st.randoms(use_true_random=False), st.lists(st.floats(0.01, 1e4), min_size=7, max_size=7))
def test_ids_never_depend_on_run_order_numbers_or_timings(rng, walls):
    report = unreproducible()
    order = list(range(1, len(report.runs)))
    rng.shuffle(order)
    numbers = {old: new for new, old in enumerate([0, *order])}
    runs = [msgspec.structs.replace(r, index=numbers[r.index], wall_s=walls[i],
                            perturbation={**r.perturbation, "seed": rng.randrange(9)}) for i, r in enumerate(report.runs)]
    artifacts = [msgspec.structs.replace(a, groups=[msgspec.structs.replace(g, runs=sorted(numbers[i] for i in g.runs))
                                            for g in a.groups])
                 for a in report.divergent_artifacts]
    shuffled = msgspec.structs.replace(report, runs=[runs[0], *_shuffled(rng, runs[1:])], seed=rng.randrange(1 << 31),
                               divergent_artifacts=_shuffled(rng, artifacts), culprits=_shuffled(rng, report.culprits),
                               hazards=_shuffled(rng, report.hazards))
    assert set(findings.identities(shuffled)) == set(findings.identities(report))


def _shuffled(rng, items: list) -> list:
    return rng.sample(items, len(items))


def test_ids_differ_for_different_findings():
    report = unreproducible()
    ids = [i.id for i in findings.identities(report)]
    assert len(ids) == len(set(ids)) == 7  # 2 artifacts, 1 kind of failure, 2 culprits, 2 hazards
    moved = msgspec.structs.replace(report.culprits[0], cwd="elsewhere")
    assert findings.of_culprit(moved).id != findings.of_culprit(report.culprits[0]).id


# --- baselines and accepted findings ------------------------------------------------------


def test_a_baseline_turns_known_findings_green_and_new_ones_red(tmp_path):
    first, _ = campaign(tmp_path, one_cpu_differs, seed=3)
    report_file = tmp_path / "first.json"
    report_file.write_text(json_format.render(first.report))
    known = baseline.read_baseline(report_file)

    green, _ = campaign(tmp_path, one_cpu_differs, seed=5, known=known)
    assert (green.report.verdict, green.exit_code) == ("unreproducible", 0)
    assert [(f.what, f.known) for f in green.report.findings] == [("out.txt", True)]
    last = text.render(green.report).splitlines()[-1]  # the closing line: verdict and exit code
    assert "UNREPRODUCIBLE" in last and "exit 0" in last

    red, _ = campaign(tmp_path, both_differ, seed=6, known=known)
    assert (red.report.verdict, red.exit_code) == ("unreproducible", 1)
    assert {(f.what, f.status, f.known) for f in red.report.findings} == {("out.txt", STILL, True),
                                                                          ("lib.a", NEW, False)}
    assert "new since the last campaign (1):\n  lib.a" in text.render(red.report)


def test_a_baseline_file_lists_the_ids_a_json_report_gives(tmp_path):
    first, _ = campaign(tmp_path, both_differ)
    written = stored.stored_baseline(tmp_path / "store", None)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(written))
    report_path = tmp_path / "report.json"
    report_path.write_text(json_format.render(first.report))
    assert baseline.read_baseline(path) == baseline.read_baseline(report_path) == {f.id for f in first.report.findings}
    assert {f["what"] for f in written["findings"]} == {"out.txt", "lib.a"}


def test_accepted_findings_do_not_fail_later_campaigns(tmp_path):
    campaign(tmp_path, one_cpu_differs, seed=3)
    accepted = stored.accept(tmp_path / "store", None)
    assert [f.what for f in accepted] == ["out.txt"]
    known, _ = campaign(tmp_path, one_cpu_differs, seed=5)
    assert known.exit_code == 0 and known.report.findings[0].known
    new, _ = campaign(tmp_path, both_differ, seed=6)
    assert new.exit_code == 1


@pytest.mark.parametrize("content, words", [
    (None, "No such file"),
    (b"{not json", "not JSON"),
    (b"\xff\xfe\x00", "not JSON"),
    (b"[1, 2]", "neither a baseline file"),
    (b'{"buildfuzz-baseline": 1, "findings": [{"id": "../etc"}]}', "not a finding id"),
    (b'{"buildfuzz-baseline": 1, "findings": {}}', "must be a list"),
    (b'{"verdict": "unreproducible", "runs": 3}', "not a JSON report this buildfuzz can read"),
])
def test_a_bad_baseline_is_one_line_exit_2_before_anything_is_made(tmp_path, content, words):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UsageError, match=words):
        baseline.read_baseline(path)
    source = make_project(tmp_path / "src", "all:\n    echo built > $@.txt\n")
    result = buildfuzz_in_process("run", "--source", source, "--store", tmp_path / "store", "--baseline", path,
                                  "--", "make")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr
    assert not (tmp_path / "store").exists() and sorted(os.listdir(tmp_path)) == sorted(
        ["src"] + (["baseline.json"] if content is not None else []))


def test_the_accept_and_baseline_commands(tmp_path):
    campaign(tmp_path, one_cpu_differs)
    store, output = tmp_path / "store", tmp_path / "baseline.json"
    written = buildfuzz("baseline", "--store", store, "-o", output)  # real processes: both entry points
    assert written.returncode == 0, written.stderr
    assert [f["what"] for f in json.loads(output.read_text())["findings"]] == ["out.txt"]
    accepted = buildfuzz("accept", "--store", store)
    assert accepted.returncode == 0 and "out.txt" in accepted.stdout
    for args in (("accept", "--store", tmp_path / "none"),
                 ("baseline", "--store", store, "--campaign", "9", "-o", output),
                 ("baseline", "--store", store, "-o", tmp_path / "no" / "dir.json")):
        refused = buildfuzz_in_process(*args)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert not (tmp_path / "none").exists()


# --- reports -------------------------------------------------------------------------------


def _junit_cases(report) -> list[ET.Element]:
    return ET.fromstring(junit.render(report).encode()).findall("testsuite/testcase")


def test_reports_say_what_is_new_and_what_was_fixed(tmp_path):
    first, _ = campaign(tmp_path, one_cpu_differs, seed=3)
    # a first campaign lists nothing as new since a last one it never had
    assert first.report.first_in_store and [f.status for f in first.report.findings] == [NEW]
    for render in (text.render, markdown.render, html.render):
        assert "ew since the last campaign" not in render(first.report)
    # the HTML folds the first campaign's findings in a fold of their own, one item each
    memory = html.render(first.report).split('<details class="fold" id="memory">', 1)[1].split("</details>", 1)[0]
    assert memory.count("<li>") == len(first.report.findings)
    second, _ = campaign(tmp_path, one_cpu_differs, seed=4)
    assert not second.report.first_in_store
    fixed, _ = campaign(tmp_path, all_same, seed=5)
    for render in (text.render, markdown.render, html.render):
        assert "ixed since the last campaign (1)" in render(fixed.report)
    cases = {c.get("name"): c for c in _junit_cases(fixed.report)}
    assert cases["out.txt"].get("classname") == "buildfuzz.artifacts" and len(cases["out.txt"]) == 0  # passes


def test_junit_skips_known_findings_and_names_stay_put(tmp_path):
    first, _ = campaign(tmp_path, one_cpu_differs, seed=3)
    second, _ = campaign(tmp_path, one_cpu_differs, seed=5, known=frozenset(f.id for f in first.report.findings))
    names = [sorted(c.get("name") for c in _junit_cases(r.report)) for r in (first, second)]
    assert names[0] == names[1] == ["artifacts identical in every successful run", "out.txt"]
    (case,) = [c for c in _junit_cases(second.report) if c.get("name") == "out.txt"]
    assert case.find("failure") is None and "known finding" in case.find("skipped").get("message")
    suite = ET.fromstring(junit.render(second.report).encode()).find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")


def test_stored_reports_keep_the_findings(tmp_path):
    first, _ = campaign(tmp_path, one_cpu_differs)
    data = _stored_report(tmp_path, first.report.campaign)
    assert data["findings"][0]["id"] == data["divergent_artifacts"][0]["finding_id"] == first.report.findings[0].id
    assert data["findings"][0]["first_seen"].endswith("+00:00")


# --- the store -----------------------------------------------------------------------------


def test_a_store_at_schema_1_is_upgraded_in_place_and_its_reports_remembered(tmp_path):
    first, _ = campaign(tmp_path, one_cpu_differs, seed=3)
    report = _stored_report(tmp_path, 1)
    with closing(sqlite3.connect(tmp_path / "store" / DB_NAME)) as db, db:
        for table in ("findings", "accepted", "remembered_runs", "finding_counts", "bisect_steps", "step_audits"):
            db.execute(f"DROP TABLE {table}")
        db.execute("ALTER TABLE runs DROP COLUMN reason")  # schema 2 added it
        db.execute("ALTER TABLE runs DROP COLUMN hashes")  # schema 6 added it
        db.execute("PRAGMA user_version = 1")
    assert len(MIGRATIONS) == VERSION >= 2
    second, executor = campaign(tmp_path, one_cpu_differs, seed=5)
    with closing(sqlite3.connect(tmp_path / "store" / DB_NAME)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (VERSION,)
    assert _stored_report(tmp_path, 1) == report
    assert executor.requests[1].perturbation in remembered(tmp_path, 2)
    assert [f.status for f in second.report.findings] == [NEW]  # the old store had no findings yet


def test_a_campaign_dropped_before_its_reference_leaves_no_remembered_runs(tmp_path):
    campaign(tmp_path, one_cpu_differs, seed=3)
    assert campaign(tmp_path, interrupted_at(1, one_cpu_differs), seed=5)[0].exit_code == 4
    with closing(sqlite3.connect(tmp_path / "store" / DB_NAME)) as db:
        assert db.execute("SELECT count(*) FROM remembered_runs WHERE campaign = 2").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM campaigns").fetchone() == (1,)
