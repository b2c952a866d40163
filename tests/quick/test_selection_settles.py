"""A localization rerun judges a build through the explain stage's Selection (`Selection.differs`):
a .buildinfo differing only in its date must be no divergence there either."""

from pathlib import Path

from fuzzer.execute.run import RunRecord
from fuzzer.explain.builds import Selection
from fuzzer.model import RunStatus
from fuzzer.plan import Perturbation

from test_packages_metadata import B1, _evidence, _manifest, buildinfo


def _run(index: int, manifest) -> RunRecord:
    return RunRecord(index, Perturbation(jobs=1, cpus=(0,)), RunStatus.OK, 0, 1.0, manifest, "")


def test_a_rerun_whose_buildinfo_differs_only_in_its_date_is_no_divergence(tmp_path: Path):
    evidence = _evidence(tmp_path, {"b2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000"), "b3": buildinfo(deb="ff" * 32)})
    reference = _run(0, _manifest(buildinfo=B1, deb="d1"))
    settling = Selection((), (), evidence.settled)
    assert not settling.differs(_run(1, _manifest(buildinfo="b2", deb="d1")), reference)
    assert settling.differs(_run(2, _manifest(buildinfo="b3", deb="d2")), reference)  # another .deb: a finding
    assert Selection((), ()).differs(_run(1, _manifest(buildinfo="b2", deb="d1")), reference)
