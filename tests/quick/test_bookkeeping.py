"""Build systems' bookkeeping (fuzzer/compare/bookkeeping.py): which files it is, how it is
settled as the reference's, and the verdict rule: compared and said in one line, deciding
nothing unless --count-bookkeeping counts it."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.campaign import run_campaign
from fuzzer.compare.bookkeeping import is_bookkeeping, settled, tool_of
from fuzzer.config import FuzzConfig
from fuzzer.execute.fake import FakeExecutor
from fuzzer.explain.builds import Selection
from fuzzer.explain.ranking import is_log_or_cache
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.report import json_format, text
from fuzzer.report.bookkeeping import bookkeeping_files

BOOKKEEPING = {
    "build/meson-private/coredata.dat": "Meson", "meson-private/build.dat": "Meson",
    "build/meson-logs/meson-log.txt": "Meson", ".ninja_log": "ninja", "build/.ninja_deps": "ninja",
    "b/CMakeFiles/CMakeOutput.log": "CMake", "CMakeFiles/CMakeConfigureLog.yaml": "CMake",
    "build/CMakeFiles/CMakeError.log": "CMake", "build/CMakeFiles/CMakeScratch/TryCompile-ab12/x.c": "CMake",
    "config.log": "autotools", "sub/config.status": "autotools", "autom4te.cache/requests": "autotools",
}
DELIVERED = ["build/libops.so", "build/meson-private/libops.pc", "build/meson-private/sanitycheckc.c",
             "ninja_log", "build/build.ninja", "CMakeCache.txt", "config.h", "meson-private.dat"]


def test_each_tools_bookkeeping_is_named_with_its_tool_at_any_depth():
    for path, tool in BOOKKEEPING.items():
        assert is_bookkeeping(path) and tool_of(path) == tool, path
        assert is_log_or_cache(path), path  # ranking's logs and caches include it: one definition
    for path in DELIVERED:
        assert not is_bookkeeping(path) and tool_of(path) == "", path


names = st.sampled_from(sorted(BOOKKEEPING) + DELIVERED)
manifests = st.dictionaries(names, st.sampled_from("abc")).map(lambda d: Manifest({p: Entry("file", v) for p, v in d.items()}))


@given(manifests, manifests)
def test_settled_keeps_every_other_file_and_takes_the_references_bookkeeping(manifest, reference):
    result = settled(manifest, reference).entries
    assert {p: e for p, e in result.items() if not is_bookkeeping(p)} == \
        {p: e for p, e in manifest.entries.items() if not is_bookkeeping(p)}
    assert {p: e for p, e in result.items() if is_bookkeeping(p)} == \
        {p: e for p, e in reference.entries.items() if is_bookkeeping(p)}


def test_the_files_that_differed_are_listed_with_their_tool_and_counts():
    runs = [Manifest({"lib.so": Entry("file", "x"), "build/meson-logs/meson-log.txt": Entry("file", str(i % 2)),
                      ".ninja_log": Entry("file", "same")}) for i in range(4)]
    runs.append(Manifest({"lib.so": Entry("file", "x")}))  # bookkeeping absent: a variant too
    found = bookkeeping_files(runs, counted=False)
    assert [(f.path, f.tool, f.variants, f.runs) for f in found.differed] == [
        (".ninja_log", "ninja", 2, 5), ("build/meson-logs/meson-log.txt", "Meson", 3, 5)]
    assert found.counted is False


def meson_like(p: Perturbation) -> dict[str, str]:
    """Meson's bookkeeping differs in every build (a uuid, a start time); the library never does."""
    return {"build/libops.so": "same", "build/meson-private/coredata.dat": f"uuid-{p.jobs}-{p.jitter}",
            "build/meson-logs/meson-log.txt": f"started {p.ncpus} {p.jobs}"}


def campaign(tmp_path, **overrides):
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    config = replace(FuzzConfig(source=source, command="ninja -C build -j{jobs}", store=tmp_path / "store", runs=8,
                                seed=3, jobs=(1, 8), localize=False), **overrides)
    return run_campaign(config, executor_factory=lambda spec: FakeExecutor(meson_like))


def test_builds_that_differ_only_in_bookkeeping_are_reproducible_and_say_it_once(tmp_path):
    outcome = campaign(tmp_path)
    report = outcome.report
    assert (report.verdict, outcome.exit_code) == ("reproducible", 0)
    assert report.divergent_artifacts == [] and {r.group for r in report.runs} == {"A"}
    assert not report.bookkeeping.counted
    assert [(f.path, f.tool, f.runs) for f in report.bookkeeping.differed] == [
        ("build/meson-logs/meson-log.txt", "Meson", 8), ("build/meson-private/coredata.dat", "Meson", 8)]
    assert all(f.variants > 1 for f in report.bookkeeping.differed)
    lines = [line for line in text.render(report).splitlines() if "coredata.dat" in line]
    assert len(lines) == 1 and lines[0].startswith("bookkeeping: ")
    assert json_format.from_builtins(json_format.to_builtins(report)).bookkeeping == report.bookkeeping


def test_count_bookkeeping_makes_them_divergent_artifacts(tmp_path):
    outcome = campaign(tmp_path, count_bookkeeping=True)
    report = outcome.report
    assert (report.verdict, outcome.exit_code) == ("unreproducible", 1)
    assert sorted(a.path for a in report.divergent_artifacts) == [
        "build/meson-logs/meson-log.txt", "build/meson-private/coredata.dat"]
    assert report.bookkeeping.counted and len(report.bookkeeping.differed) == 2


def test_localization_and_the_audit_chase_bookkeeping_only_when_it_counts():
    manifest = Manifest({p: Entry("file", "x") for p in ("build/libops.so", "build/meson-logs/meson-log.txt",
                                                         ".ninja_log", "notes.txt")})
    discounted, counted = Selection((), ("notes.txt",)), Selection((), ("notes.txt",), count_bookkeeping=True)
    assert set(discounted.compared(manifest).entries) == {"build/libops.so", "build/meson-logs/meson-log.txt",
                                                          ".ninja_log"}  # compared: the report lists it
    assert set(discounted.everything(manifest).entries) == set(discounted.judged(manifest).entries) == {"build/libops.so"}
    assert set(counted.everything(manifest).entries) == set(counted.compared(manifest).entries)
