"""A build made again (a replay, a fix proof's) is judged as the campaign judged its runs: its
upload records settled against the reference's bytes, whichever reference that is."""

import hashlib
from pathlib import Path

from fuzzer.execute.run import RunRecord
from fuzzer.explain.builds import Selection
from fuzzer.fix.proof import _shows
from fuzzer.model import RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.replay import judged

from test_packages_metadata import B1, _evidence, _manifest, buildinfo

PATH = "../hello_2.10-3_amd64.buildinfo"


def _run(index: int, manifest) -> RunRecord:
    return RunRecord(index, Perturbation(jobs=1, cpus=(0,)), RunStatus.OK, 0, 1.0, manifest, "")


def test_the_fix_proof_sets_aside_a_buildinfo_that_differs_only_in_its_date(tmp_path: Path):
    evidence = _evidence(tmp_path, {"b2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000"), "b3": buildinfo(deb="ff" * 32)})
    reference, selection = _run(0, _manifest(buildinfo=B1, deb="d1")), Selection((), (), evidence.settled)
    assert _shows(selection, _run(1, _manifest(buildinfo="b2", deb="d1")), reference) == ""
    assert _shows(selection, _run(2, _manifest(buildinfo="b3", deb="d2")), reference) == "../h.deb differs"


def test_a_patched_reference_is_read_from_its_own_bytes_not_the_campaign_reference_tree(tmp_path: Path):
    patched = buildinfo(deb="ee" * 32)  # the patch changed the .deb, and so the .buildinfo's checksums
    digest = hashlib.sha256(patched).hexdigest()
    evidence = _evidence(tmp_path, {digest: patched, "p2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000", deb="ee" * 32),
                                    "b2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000")})
    selection = Selection((), (), evidence.settled)
    patched_reference = Manifest({PATH: Entry("file", digest, size=100)})
    assert selection.differing(patched_reference, Manifest({PATH: Entry("file", "p2", size=100)}), patched_reference) == []
    # the same date-only difference, from another reference: judged afresh, not from the first answer
    unkept = Manifest({PATH: Entry("file", "ab" * 32, size=100)})  # neither a blob nor the tree has its bytes
    assert selection.differing(unkept, Manifest({PATH: Entry("file", "b2", size=100)}), unkept) == [PATH]


def test_a_replay_matches_the_run_it_replays_when_both_differ_from_the_reference_only_as_always(tmp_path: Path):
    evidence = _evidence(tmp_path, {"b2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000", jobs=4),
                                    "b3": buildinfo("Fri, 04 Dec 2026 00:00:00 +0000", jobs=4)})
    runs = (_run(0, _manifest(buildinfo=B1, deb="d1")), _run(1, _manifest(buildinfo="b2", deb="d1")))
    result = judged(Selection((), (), evidence.settled), runs, 1, _run(0, _manifest(buildinfo="b3", deb="d1")))
    assert not result.reproduced, result.summary
    assert result.summary.splitlines()[1:] == ["same digests as run 1 (2 files compared)",
                                               "same digests as the reference (2 files compared)",
                                               "not reproduced: the build matched the reference"]
