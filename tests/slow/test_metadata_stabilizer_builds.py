"""SOURCE_DATE_EPOCH is claimed for a metadata-only difference only when a control build
without it differs at the reference settings and the builds with it agree."""

import shutil

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig


PACK = """import os, time, zipfile
stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time())))[:6]
os.makedirs("dist", exist_ok=True)
with zipfile.ZipFile("dist/x.whl", "w") as z:
    for name in ("x/__init__.py", "x/core.py"):
        z.writestr(zipfile.ZipInfo(name, stamp), "pass\\n")
"""


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
