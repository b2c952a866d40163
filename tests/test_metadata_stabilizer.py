"""SOURCE_DATE_EPOCH is claimed for a metadata-only difference only when a control build
without it differs at the reference settings and the builds with it agree."""

import shutil

import pytest

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.execute.run import RunRecord, Status
from fuzzer.explain import artifact_metadata
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.report.model import ArtifactFinding

ARTIFACT = ArtifactFinding("dist/x.whl", 2, [], [], [], False)


def _run(digest: str | None, ok: bool = True) -> RunRecord:
    entries = {"dist/x.whl": Entry("file", digest)} if digest else {}
    return RunRecord(0, Perturbation(jobs=1, cpus=(0,)), Status.OK if ok else Status.FAILED, 0, 1.0,
                     Manifest(entries), "")


@pytest.mark.parametrize("control, builds, stable, says", [
    ("b", ["c", "c"], True, "stabilised by SOURCE_DATE_EPOCH"),
    ("b", ["c", "d"], False, "still differed"),
    ("a", ["c", "c"], False, "follows the perturbation, not the clock"),  # the control matched: proves nothing
    ("b", ["c", None], False, "1 of the 2 builds"),
])
def test_the_claim_needs_a_differing_control_and_agreeing_builds(control, builds, stable, says):
    records = [_run(d) if d else _run("x", ok=False) for d in builds]
    found = artifact_metadata._verdict(ARTIFACT, _run("a"), _run(control), records)
    assert found.stable is stable and says in found.evidence


PACK = """import os, time, zipfile
stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time())))[:6]
os.makedirs("dist", exist_ok=True)
with zipfile.ZipFile("dist/x.whl", "w") as z:
    for name in ("x/__init__.py", "x/core.py"):
        z.writestr(zipfile.ZipInfo(name, stamp), "pass\\n")
"""


@pytest.mark.slow
def test_a_zip_stamped_with_the_clock_is_metadata_only_and_stabilised(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "pack.py").write_text(PACK)
    python = shutil.which("python3")
    config = FuzzConfig(source=source, command=f"{python} pack.py && sleep 1.1", store=tmp_path / "s", runs=3,
                        seed=1, jobs=(1, 2))
    report = run_campaign(config).report
    (artifact,) = report.divergent_artifacts
    assert artifact.inside.summary == "2 members identical in content; only zip entry timestamps differ"
    assert artifact.metadata_stabilizer.stable, artifact.metadata_stabilizer.evidence
    assert any(f.kind == "metadata" for f in report.findings)
