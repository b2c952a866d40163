"""What the report says is inside a divergent artifact holds for every kept variant, not only
for the first pair: two builds may differ only in timestamps while a third differs in content."""

from __future__ import annotations

import io
import zipfile

from fuzzer.campaign.evidence import Evidence
from fuzzer.compare import DivergentArtifact, Variant
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation


def wheel(stamp: tuple[int, ...], body: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zipfile.ZipInfo("pkg/mod.py", date_time=stamp), body)
    return out.getvalue()


def kept(tmp_path, variants: list[bytes]) -> tuple[Evidence, list[RunRecord], DivergentArtifact]:
    evidence = Evidence(tmp_path)
    evidence.blob("x").parent.mkdir(parents=True)
    runs = []
    for index, data in enumerate(variants):
        evidence.blob(f"d{index}").write_bytes(data)
        manifest = Manifest({"dist/x.whl": Entry("file", f"d{index}", size=len(data))})
        runs.append(RunRecord(index, Perturbation(1 + index, (0,), 0.0, 0), RunStatus.OK, 0, 1.0, manifest, ""))
    artifact = DivergentArtifact("dist/x.whl", tuple(Variant(chr(65 + i), f"d{i}", (i,)) for i in range(len(variants))),
                                 (), False)
    return evidence, runs, artifact


def test_a_variant_differing_in_content_is_not_hidden_by_a_metadata_only_pair(tmp_path):
    evidence, runs, artifact = kept(tmp_path, [wheel((2020, 1, 1, 0, 0, 0), b"a = 1\n"),
                                               wheel((2020, 1, 1, 0, 0, 2), b"a = 1\n"),
                                               wheel((2020, 1, 1, 0, 0, 4), b"a = 2\n")])
    diff = evidence.diffs(runs, type("C", (), {"divergent": (artifact,)})(), timeout=10)["dist/x.whl"]
    assert diff.inside is not None and not diff.inside.metadata_only
    assert diff.runs == (0, 2)


def test_metadata_only_when_every_kept_variant_is(tmp_path):
    evidence, runs, artifact = kept(tmp_path, [wheel((2020, 1, 1, 0, 0, s), b"a = 1\n") for s in (0, 2, 4)])
    diff = evidence.diffs(runs, type("C", (), {"divergent": (artifact,)})(), timeout=10)["dist/x.whl"]
    assert diff.inside is not None and diff.inside.metadata_only and diff.runs == (0, 1)
