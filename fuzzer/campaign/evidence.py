"""The files a campaign keeps for diffs: the reference build's tree, and a few variants of
every file a later run left differently (as blobs named by digest). What keeps them and
what reads them back (reports, known noise) meet here, not in a path convention."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer import structs
from fuzzer.compare import Comparison, DivergentArtifact
from fuzzer.compare.diff import readable_diff
from fuzzer.compare.inside import Inside, look_inside
from fuzzer.compare.package_metadata import Expected, expected_difference, is_package_metadata
from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunRecord
from fuzzer.model import InsideSummary
from fuzzer.observe import Entry, Manifest, has_digest
from fuzzer.report.build import Diff
from fuzzer.tools import diffoscope

BLOB_LIMIT = 64 << 20  # variants larger than this are not kept for diffs
VARIANTS_KEPT = 3  # per path: enough to diff; an intrinsic build must not fill the disk overnight
PACKAGE_METADATA_LIMIT = 1 << 20  # every variant of a .buildinfo or .changes (a few KB) is kept: each is judged
DIFFED_ARTIFACTS = 5  # diffs are for reading; the first few divergent artifacts suffice
LOOKED_INSIDE = 50  # the comparators take milliseconds an artifact: enough to reach the deliverables
DIFF_SHARE = 0.05  # of a --budget, kept for the diffs that end the campaign (at most their timeouts)


def diff_reserve_s(budget_s: float | None, diff_timeout: float) -> float:
    """What a campaign under --budget keeps for diffoscope, which runs after the builds, the
    audit and localization, and must end inside the budget like them."""
    if budget_s is None or diffoscope.DIFFOSCOPE.problem() is not None:
        return 0.0
    return min(DIFF_SHARE * budget_s, DIFFED_ARTIFACTS * diff_timeout)


@dataclass
class Evidence:
    dir: Path  # the campaign's directory in the store
    tree_name: str = "tree"  # the workspace's own name
    kept: dict[str, int] = field(default_factory=dict)  # path → variants kept as blobs in this invocation
    # (path, digest, reference's digest) → what that variant of a .buildinfo/.changes differs from
    # that reference's in, when only what differs in every build (compare/package_metadata.py);
    # None: something else. A fix proof judges against a patched reference too.
    expected: dict[tuple[str, str, str], Expected | None] = field(default_factory=dict)

    @property
    def reference_tree(self) -> Path:
        """Under its own name in a copy of its parent: `../x.deb` is beside it there too."""
        return self.dir / "reference" / self.tree_name

    def blob(self, digest: str) -> Path:
        return self.dir / "blobs" / digest

    def keep(self, executor: Executor, record: RunRecord, reference: Manifest | None) -> None:
        """Keep the reference tree (run 0), or the variants of `record`'s files that differ
        from `reference`'s."""
        if record.index == 0:
            if record.ok and not self.reference_tree.exists():
                # --output files are named by absolute paths, outside any kept tree: kept as blobs
                self._keep_blobs(executor, record, [p for p in record.built.entries if p.startswith("/")])
                if executor.keep_tree(record, self.reference_tree):
                    _drop_large_files(self.reference_tree.parent)
            return
        if not record.ok or record.manifest is None or reference is None:
            return
        self._keep_blobs(executor, record, [p for p, e in record.manifest.entries.items()
                                            if reference.entries.get(p) is None
                                            or reference.entries[p].identity() != e.identity()])

    def keep_records(self, executor: Executor, record: RunRecord) -> None:
        """Keep every upload record of a build made again (a replay, a fix proof's), so that
        `settled` judges it, or judges against it, as it did the campaign's runs."""
        if record.ok and record.manifest is not None:
            self._keep_blobs(executor, record, [p for p in record.manifest.entries if is_package_metadata(p)])

    def _keep_blobs(self, executor: Executor, record: RunRecord, paths: list[str]) -> None:
        for path in paths:
            entry = record.built.entries[path]
            if entry.kind != "file" or entry.size > BLOB_LIMIT:
                continue
            blob = self.blob(entry.digest)
            judged = is_package_metadata(path) and entry.size <= PACKAGE_METADATA_LIMIT
            if not blob.exists() and (self.kept.get(path, 0) < VARIANTS_KEPT or judged):
                if executor.fetch(record, path, blob):
                    self.kept[path] = self.kept.get(path, 0) + 1

    def settled(self, manifest: Manifest, reference: Manifest) -> Manifest:
        """`manifest` with each .buildinfo or .changes that differs from `reference`'s only as it
        does in every build given the reference's entry: the verdict, the run groups and the
        localization then see the packages alone. A variant not kept (a localization build's)
        is settled when every judged variant of its path was."""
        records = sorted((p for p in manifest.entries if is_package_metadata(p)), key=lambda p: p.endswith(".changes"))
        if not records:
            return manifest
        entries, changed = dict(manifest.entries), False
        for path in records:  # .buildinfo first: a .changes is settled only with the .buildinfo it lists
            ours, theirs = manifest.entries[path], reference.entries.get(path)
            if theirs is None or ours.identity() == theirs.identity():
                continue
            found = self._expected(path, ours, theirs)
            if found and all(p in entries and p in reference.entries and entries[p].identity()
                             == reference.entries[p].identity() for p in found.needs):
                entries[path], changed = theirs, True
        return Manifest(entries) if changed else manifest

    def _expected(self, path: str, ours: Entry, theirs: Entry) -> Expected | None:
        key = (path, ours.digest, theirs.digest)
        if key not in self.expected:
            variant, original = self._read(self.blob(ours.digest)), self._reference_bytes(path, theirs)
            if variant is None or original is None:
                judged = [found for (p, _, r), found in self.expected.items() if p == path and r == theirs.digest]
                return judged[0] if judged and all(judged) else None  # not cached: its blob may come
            self.expected[key] = expected_difference(path, original, variant)
        return self.expected[key]

    def expected_of(self, path: str) -> tuple[str, ...]:
        """What the variants of `path` that were set aside differ in (() when none was)."""
        return tuple(dict.fromkeys(part for (p, *_), found in sorted(self.expected.items()) if p == path and found
                                   for part in found.parts))

    def _reference_bytes(self, path: str, entry: Entry) -> bytes | None:
        """`entry`'s bytes: its blob, or the reference tree's copy (run 0's) when it has them."""
        kept = [self.blob(entry.digest)] + ([] if path.startswith("/") else
                                            [Path(os.path.normpath(self.reference_tree / path))])
        return next((data for data in map(self._read, kept) if data is not None and has_digest(data, entry.digest)),
                    None)

    @staticmethod
    def _read(path: Path) -> bytes | None:
        try:
            return path.read_bytes() if path.stat().st_size <= PACKAGE_METADATA_LIMIT else None
        except OSError:
            return None

    def variant_file(self, record: RunRecord, path: str) -> Path | None:
        """Where the campaign kept `record`'s copy of `path`: the reference tree or a blob."""
        entry = record.manifest.entries.get(path) if record.manifest else None
        if entry is None or entry.kind != "file":
            return None
        candidates = [self.blob(entry.digest)]
        if record.index == 0 and not path.startswith("/"):  # an --output file's is a blob: not in the tree
            candidates.insert(0, Path(os.path.normpath(self.reference_tree / path)))  # ../x.deb: beside it
        return next((c for c in candidates if c.is_file()), None)

    def diffs(self, runs: list[RunRecord], comparison: Comparison | None, timeout: float,
              deadline: float = float("inf")) -> dict[str, Diff]:
        """Path → what the comparators saw inside the first LOOKED_INSIDE divergent artifacts
        (milliseconds each), and for the first DIFFED_ARTIFACTS the diff between the first runs
        of two variants (the first and the first that differs from it in content) and diffoscope's
        reports, as files beside the report; diffoscope stops at `timeout` or at `deadline`
        (time.monotonic(): the end of --budget), whichever comes first."""
        divergent = comparison.divergent[:LOOKED_INSIDE] if comparison else ()
        return {a.path: self._diff(runs, a, timeout, deadline, deep=i < DIFFED_ARTIFACTS)
                for i, a in enumerate(divergent)}

    def _diff(self, runs: list[RunRecord], artifact: DivergentArtifact, timeout: float, deadline: float,
              deep: bool) -> Diff:
        pair = (artifact.variants[0].runs[0], artifact.variants[1].runs[0])
        found = [self.variant_file(runs[index], artifact.path) for index in pair]
        files = [f for f in found if f is not None]
        if len(files) < len(found):
            missing = [str(i) for i, f in zip(pair, found) if f is None]
            text = f"(no diff: {artifact.path} is absent or not kept in run {', '.join(missing)})"
            return Diff(pair, text if deep else "")
        pair, (a, b), inside = self._telling_pair(runs, artifact, pair, files)
        if not deep:
            return Diff(pair, "", inside=InsideSummary(**structs.to_data(inside)))
        labels = (f"run {pair[0]}/{artifact.path}", f"run {pair[1]}/{artifact.path}")
        reports = _diffoscope(a, b, artifact.path, (f"run{pair[0]}", f"run{pair[1]}"), self.dir / "diffs",
                              timeout, deadline)
        notes = [*inside.notes, *([reports.note] if reports.note else [])]
        return Diff(pair, readable_diff(a, b, inside, labels), reports.files,
                    InsideSummary(**{**structs.to_data(inside), "notes": notes}))


    def _telling_pair(self, runs: list[RunRecord], artifact: DivergentArtifact, pair: tuple[int, int],
                      files: list[Path]) -> tuple[tuple[int, int], tuple[str, str], Inside]:
        """The first variant against the first other one that differs in content, else against
        the second: an artifact is metadata-only when every kept variant is, not just one pair
        (a .deb whose timestamps differ in two builds and whose member differs in a third)."""
        first = str(files[0])
        inside = look_inside(first, str(files[1]), artifact.path)
        for variant in artifact.variants[2:]:
            if inside.content_differs:
                break
            other = self.variant_file(runs[variant.runs[0]], artifact.path)
            if other is not None:
                found = look_inside(first, str(other), artifact.path)
                if found.content_differs:
                    return (pair[0], variant.runs[0]), (first, str(other)), found
        return pair, (first, str(files[1])), inside


def _drop_large_files(tree: Path) -> None:
    """The kept reference tree is for diffs, and files over BLOB_LIMIT are never diffed:
    a campaign's store growth stays bounded by the small files of one tree."""
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size > BLOB_LIMIT:
            path.unlink()


def _diffoscope(a: str, b: str, name: str, labels: tuple[str, str], out: Path, timeout: float,
                deadline: float) -> diffoscope.Reports:
    """diffoscope's reports within --diff-timeout and what is left of --budget."""
    left = deadline - time.monotonic()
    if left >= timeout or diffoscope.DIFFOSCOPE.problem() is not None:
        return diffoscope.write_reports(a, b, name, labels, out, timeout)
    if left <= 0:
        return diffoscope.Reports((), "diffoscope not run: --budget was spent")
    return diffoscope.write_reports(a, b, name, labels, out, left, limit="what --budget left")
