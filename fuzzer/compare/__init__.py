"""compare: group runs by digest per artifact and find which axes separate the groups.

Pure functions over run records; nothing here touches the file system.
"""

from __future__ import annotations

import string
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Sequence

from fuzzer import axes
from fuzzer.execute.run import RunRecord
from fuzzer.observe import Entry, Manifest

ABSENT = "absent"
FACETS = tuple(name for axis in axes.AXES for name, _ in axis.facets)  # what may separate variants
MIN_RUNS_PER_SIDE = 2  # one run per variant cannot tell an axis from chance


@dataclass(frozen=True)
class Variant:
    label: str  # "A", "B", ... in order of first appearance; A is the reference's
    identity: str  # content digest (or "absent", or "symlink -> target")
    runs: tuple[int, ...]


@dataclass(frozen=True)
class AxisFactor:
    """An axis whose value determines the variant: every value gives one variant."""

    axis: str
    groups: tuple[tuple[str, tuple[object, ...]], ...]  # (variant label, axis values)

    def describe(self) -> str:
        parts = [f"{self.axis} in {{{', '.join(map(str, values))}}} → {label}" for label, values in self.groups]
        return "; ".join(parts)


@dataclass(frozen=True)
class DivergentArtifact:
    path: str
    variants: tuple[Variant, ...]
    factors: tuple[AxisFactor, ...]  # axes that separate the variants, best first
    same_conditions: bool  # two runs with identical perturbation (no jitter) differ
    too_few_runs: tuple[str, ...] = ()  # axes that match the variants, on too few runs to claim it


@dataclass(frozen=True)
class Comparison:
    reference: int
    checked: int  # artifacts compared
    divergent: tuple[DivergentArtifact, ...]
    failed: tuple[int, ...]  # runs that failed or timed out while the reference passed
    groups: dict[int, str]  # run index → label of its whole-manifest digest group

    @property
    def reproducible(self) -> bool:
        return not self.divergent and not self.failed

    def telling_runs(self) -> list[int]:
        """Failed runs first, then runs whose digest group is not the reference's."""
        reference = self.groups.get(self.reference)
        return [*self.failed, *(i for i, g in sorted(self.groups.items()) if g != reference)]


def compare(runs: Sequence[RunRecord]) -> Comparison:
    """`runs[0]` is the reference; only successful runs' manifests are compared."""
    reference = runs[0]
    ok = [r for r in runs if r.ok and r.manifest is not None]
    manifests = {r.index: r.manifest for r in ok if r.manifest is not None}  # said again: for the type checker
    failed = tuple(r.index for r in runs if not r.ok) if reference.ok else ()
    paths = sorted({p for m in manifests.values() for p in m.entries})
    divergent = []
    for path in paths:
        variants = _variants(path, manifests)
        if len(variants) > 1:
            divergent.append(_divergent(path, variants, ok))
    return Comparison(
        reference=reference.index,
        checked=len(paths),
        divergent=tuple(divergent),
        failed=failed,
        groups=_labels({index: m.digest() for index, m in manifests.items()}),
    )


def _identity(entry: Entry | None) -> str:
    if entry is None:
        return ABSENT
    if entry.kind == "symlink":
        return f"symlink -> {entry.digest}"
    return entry.digest + (" (executable)" if entry.executable else "")


def _variants(path: str, manifests: dict[int, Manifest]) -> tuple[Variant, ...]:
    by_identity: dict[str, list[int]] = defaultdict(list)
    for index, manifest in manifests.items():
        by_identity[_identity(manifest.entries.get(path))].append(index)
    ordered = sorted(by_identity.items(), key=lambda kv: min(kv[1]))
    return tuple(Variant(variant_label(i), ident, tuple(idx)) for i, (ident, idx) in enumerate(ordered))


def _divergent(path: str, variants: tuple[Variant, ...], runs: Sequence[RunRecord]) -> DivergentArtifact:
    variant_of = {i: v.label for v in variants for i in v.runs}
    by_index = {r.index: r for r in runs}
    facets = {i: axes.facets(r.perturbation) for i, r in by_index.items()}
    matching = [f for facet in FACETS if (f := axis_factor(facet, variant_of, facets)) is not None]
    sizes = Counter(variant_of.values())
    supported = min(sizes.values()) >= MIN_RUNS_PER_SIDE
    factors = tuple(matching) if supported else ()
    thin = () if supported else tuple(f.axis for f in matching)
    return DivergentArtifact(path, variants, factors, _differs_under_same_conditions(variant_of, by_index), thin)


def axis_factor(axis: str, variant_of: dict[int, str], facets: dict[int, dict[str, object]]) -> AxisFactor | None:
    """The axis matches the variants if each of its values maps to one variant (whether
    that is enough runs to claim it is the caller's question)."""
    values_of: dict[str, set[object]] = defaultdict(set)
    variant_of_value: dict[object, str] = {}
    for index, label in variant_of.items():
        value = facets[index][axis]
        if variant_of_value.setdefault(value, label) != label:
            return None
        values_of[label].add(value)
    if len(values_of) < 2:
        return None
    groups = tuple((label, tuple(sorted(values, key=str))) for label, values in sorted(values_of.items()))
    return AxisFactor(axis, groups)


def _differs_under_same_conditions(variant_of: dict[int, str], runs: dict[int, RunRecord]) -> bool:
    """Two runs without jitter, alike on every axis (order, environment and targeted
    variations included), gave different variants."""
    seen: dict[tuple[object, ...], set[str]] = defaultdict(set)
    for index, label in variant_of.items():
        p = runs[index].perturbation
        if p.jitter == 0:
            seen[(p.jobs, p.cpus, p.variations)].add(label)
    return any(len(labels) > 1 for labels in seen.values())


def _labels(digests: dict[int, str]) -> dict[int, str]:
    order: dict[str, str] = {}
    for index in sorted(digests):
        order.setdefault(digests[index], variant_label(len(order)))
    return {index: order[digest] for index, digest in digests.items()}


def variant_label(i: int) -> str:
    letters = string.ascii_uppercase
    return letters[i] if i < len(letters) else f"V{i}"
