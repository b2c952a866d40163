"""What the report says is inside a divergent artifact holds for every kept variant, not only
for the first pair: two builds may differ only in timestamps while a third differs in content."""

from __future__ import annotations

import io
import os
import time
import zipfile

from hypothesis import given, strategies as st

from fuzzer.campaign.evidence import DIFF_SHARE, DIFFED_ARTIFACTS, Evidence, diff_reserve_s
from fuzzer.compare import DivergentArtifact, Variant
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.tools import diffoscope


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


def test_diffoscope_stops_at_the_end_of_the_budget(tmp_path, monkeypatch):
    """diffoscope runs after localization: it gets what --budget left, never more."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "diffoscope").write_text("#!/bin/sh\nsleep 5\n")
    (bin_dir / "diffoscope").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    evidence, runs, artifact = kept(tmp_path, [wheel((2020, 1, 1, 0, 0, 0), b"a = %d\n" % i) for i in (1, 2)])
    comparison = type("C", (), {"divergent": (artifact,)})()
    spent = evidence.diffs(runs, comparison, timeout=10, deadline=time.monotonic() - 1)["dist/x.whl"]
    assert "diffoscope not run: --budget was spent" in spent.inside.notes
    started = time.monotonic()
    cut = evidence.diffs(runs, comparison, timeout=10, deadline=time.monotonic() + 0.5)["dist/x.whl"]
    assert time.monotonic() - started < 4
    assert any("(what --budget left)" in note for note in cut.inside.notes), cut.inside.notes


@given(budget=st.one_of(st.none(), st.floats(0, 1e6)), timeout=st.floats(0, 1e4))
def test_the_diffs_reserve_is_a_small_share_of_a_budget(budget, timeout):
    reserve = diff_reserve_s(budget, timeout)
    if budget is None or diffoscope.DIFFOSCOPE.problem() is not None:
        assert reserve == 0
    else:
        assert 0 <= reserve <= DIFF_SHARE * budget and reserve <= DIFFED_ARTIFACTS * timeout
