"""The files a campaign keeps for diffs: the reference build's tree, and a few variants of
every file a later run left differently (as blobs named by digest). What keeps them and
what reads them back (reports, known noise) meet here, not in a path convention."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.compare import Comparison, DivergentArtifact
from fuzzer.compare.diff import diff_files
from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunRecord
from fuzzer.observe import Manifest
from fuzzer.report.build import Diff
from fuzzer.tools import diffoscope

BLOB_LIMIT = 64 << 20  # variants larger than this are not kept for diffs
VARIANTS_KEPT = 3  # per path: enough to diff; an intrinsic build must not fill the disk overnight
DIFFED_ARTIFACTS = 5  # diffs are for reading; the first few divergent artifacts suffice
HTML_DIFF_LIMIT = 4 << 20  # a larger diffoscope page would swamp the report


@dataclass
class Evidence:
    dir: Path  # the campaign's directory in the store
    tree_name: str = "tree"  # the workspace's own name
    kept: dict[str, int] = field(default_factory=dict)  # path → variants kept as blobs in this invocation

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
                self._keep_blobs(executor, record, [p for p in record.manifest.entries if p.startswith("/")])
                if executor.keep_tree(record, self.reference_tree):
                    _drop_large_files(self.reference_tree.parent)
            return
        if not record.ok or record.manifest is None or reference is None:
            return
        self._keep_blobs(executor, record, [p for p, e in record.manifest.entries.items()
                                            if reference.entries.get(p) is None
                                            or reference.entries[p].identity() != e.identity()])

    def _keep_blobs(self, executor: Executor, record: RunRecord, paths: list[str]) -> None:
        for path in paths:
            entry = record.manifest.entries[path]
            if entry.kind != "file" or entry.size > BLOB_LIMIT:
                continue
            blob = self.blob(entry.digest)
            if not blob.exists() and self.kept.get(path, 0) < VARIANTS_KEPT:
                if executor.fetch(record, path, blob):
                    self.kept[path] = self.kept.get(path, 0) + 1

    def variant_file(self, record: RunRecord, path: str) -> Path | None:
        """Where the campaign kept `record`'s copy of `path`: the reference tree or a blob."""
        entry = record.manifest.entries.get(path) if record.manifest else None
        if entry is None or entry.kind != "file":
            return None
        candidates = [self.blob(entry.digest)]
        if record.index == 0 and not path.startswith("/"):  # an --output file's is a blob: not in the tree
            candidates.insert(0, Path(os.path.normpath(self.reference_tree / path)))  # ../x.deb: beside it
        return next((c for c in candidates if c.is_file()), None)

    def diffs(self, runs: list[RunRecord], comparison: Comparison | None, timeout: float) -> dict[str, Diff]:
        """Path → the diff of the first DIFFED_ARTIFACTS divergent artifacts, between the
        first runs of their first two variants (diffoscope's page too, when it is installed)."""
        divergent = comparison.divergent[:DIFFED_ARTIFACTS] if comparison else ()
        return {artifact.path: self._diff(runs, artifact, timeout) for artifact in divergent}

    def _diff(self, runs: list[RunRecord], artifact: DivergentArtifact, timeout: float) -> Diff:
        pair = (artifact.variants[0].runs[0], artifact.variants[1].runs[0])
        files = [self.variant_file(runs[index], artifact.path) for index in pair]
        if None in files:
            missing = [str(i) for i, f in zip(pair, files) if f is None]
            return Diff(pair, f"(no diff: {artifact.path} is absent or not kept in run {', '.join(missing)})")
        labels = (f"run {pair[0]}/{artifact.path}", f"run {pair[1]}/{artifact.path}")
        text = diff_files(str(files[0]), str(files[1]), labels=labels, timeout=timeout)
        html = diffoscope.report(str(files[0]), str(files[1]), "html", timeout) or ""
        return Diff(pair, text, html if len(html) <= HTML_DIFF_LIMIT else "")


def _drop_large_files(tree: Path) -> None:
    """The kept reference tree is for diffs, and files over BLOB_LIMIT are never diffed:
    a campaign's store growth stays bounded by the small files of one tree."""
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size > BLOB_LIMIT:
            path.unlink()
