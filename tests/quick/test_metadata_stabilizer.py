"""SOURCE_DATE_EPOCH is claimed for a metadata-only difference only when a control build
without it differs at the reference settings and the builds with it agree."""

import pytest

from fuzzer.execute.run import RunRecord
from fuzzer.explain import artifact_metadata
from fuzzer.model import ArtifactFinding, RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation


ARTIFACT = ArtifactFinding("dist/x.whl", 2, [], [], [], False)


def _run(digest: str | None, ok: bool = True) -> RunRecord:
    entries = {"dist/x.whl": Entry("file", digest)} if digest else {}
    return RunRecord(0, Perturbation(jobs=1, cpus=(0,)), RunStatus.OK if ok else RunStatus.FAILED, 0, 1.0,
                     Manifest(entries), "")


@pytest.mark.parametrize("control, builds, stable, says", [
    ("b", ["c", "c"], True, "stabilised by SOURCE_DATE_EPOCH"),
    ("b", ["c", "d"], False, "still differed"),
    ("a", ["c", "c"], False, "follows the perturbation, not the clock"),  # the control matched: proves nothing
    ("b", ["c", None], False, "1 of the 2 builds"),
])
def test_the_claim_needs_a_differing_control_and_agreeing_builds(control, builds, stable, says):
    records = [_run(d) if d else _run("x", ok=False) for d in builds]
    found = artifact_metadata._verdict(ARTIFACT.path, _run("a"), _run(control), records)
    assert found.stable is stable and says in found.evidence
