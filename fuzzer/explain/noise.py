"""Known noise: logs whose variants differ only in temporary file names, process ids or dates.

A configure script's `config.log` quotes the linker's errors from failed link tests,
`/usr/bin/ld: /tmp/ccVIeq8g.o: in function main`, and gcc picks a new random object name
every time. The step that writes it is intrinsic, but nothing a release engineer can act
on. It is recognised from the two variants themselves: each kind of noise is replaced by a
placeholder, and when the variants become equal, those kinds were all that differed.
Only logs and caches are judged so (a date inside a library is a real finding, fixed by
SOURCE_DATE_EPOCH; Debian's `.buildinfo` and `.changes` are set aside before, by
fuzzer/compare/package_metadata.py, when they differ only as in every build). The variants are those
at hand before any replay: run 0's tree, the traced reference's (through the executor), and
the variants kept from the campaign's runs.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunRecord
from fuzzer.explain.ranking import is_log_or_cache
from fuzzer.trace import tempnames
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.tempnames import NameKind

MAX_BYTES = 16 << 20  # a log larger than this is not normalised (and not called noise)

_MONTH = (r"\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:tember)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b")
_DAY = r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\b"
_CLOCK = r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?"  # with seconds: file:line:col is no time
DATES = NameKind("dates", ((
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"  # ISO 8601
    r"|(?:" + _DAY + r",?\s+)?" + _MONTH + r"\s+\d{1,2}(?:,?\s+\d{4})?(?:\s+" + _CLOCK
    + r")?(?:\s+[A-Z]{3,4})?(?:\s+\d{4})?"  # Dec  1 2026 10:54:54, Mon Dec 1 10:54:54 UTC 2026
    r"|\b\d{1,2}\s+" + _MONTH + r"\s+\d{4}"  # 1 Dec 2026
    r"|(?<![\w:.])" + _CLOCK + r"(?![\d:])", "<date>"),))
# Each kind: what the report calls it, and how its values are found and blanked; the
# random names are those every other stage blanks too (fuzzer/trace/tempnames.py).
KINDS: tuple[NameKind, ...] = (*tempnames.KINDS, DATES)


class KeptVariants(Protocol):
    """What the campaign kept of its runs' files (fuzzer/campaign/evidence.py's `Evidence`)."""

    @property
    def dir(self) -> Path: ...  # the campaign's directory: scratch files go under it

    @property
    def reference_tree(self) -> Path: ...  # run 0's tree

    def blob(self, digest: str) -> Path: ...  # a kept variant, by its digest


@dataclass(frozen=True)
class Noise:
    path: str
    kinds: tuple[str, ...]  # what differed: "names of temporary files", "process ids", "dates"
    example: tuple[str, str]  # one differing value in each variant

    def describe(self) -> str:
        return " and ".join(self.kinds)

    def evidence(self) -> str:
        a, b = self.example
        return f"the variants of {self.path} differ only in {self.describe()} (e.g. {a} vs {b})"


def noise_between(path: str, a: bytes, b: bytes) -> Noise | None:
    """The noise that explains every difference between two variants of a text file; None
    when they are equal, binary, too large, or differ in anything else."""
    if a == b or b"\0" in a or b"\0" in b or max(len(a), len(b)) > MAX_BYTES:
        return None
    kinds, example = [], None
    for kind in KINDS:
        found_a, found_b = kind.found(a), kind.found(b)
        if found_a != found_b:
            kinds.append(kind.name)
            example = example or _first_difference(found_a, found_b)
        a, b = kind.blanked(a), kind.blanked(b)
    if a != b or example is None:
        return None
    return Noise(path, tuple(kinds), example)


def _first_difference(a: list[bytes], b: list[bytes]) -> tuple[str, str]:
    x, y = next(((x, y) for x, y in zip(a, b) if x != y), (a[0] if a else b"", b[0] if b else b""))
    return x.decode(errors="replace"), y.decode(errors="replace")


def known_noise(runs: Sequence[RunRecord], evidence: KeptVariants, executor: Executor, traced_reference: RunRecord,
                roots: list[RootCandidate]) -> dict[int, Noise]:
    """Roots (by index) whose differing outputs are all logs or caches differing only in
    temporary names, pids or dates, judged on the variants at hand: run 0's tree, the traced
    reference's, and the variants of the campaign's `runs` kept in `evidence` (its
    `reference_tree`, its `blob(digest)`, and its `dir` for scratch files)."""
    found: dict[int, Noise] = {}
    evidence.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="variants-", dir=evidence.dir) as scratch:
        for i, root in enumerate(roots):
            if not root.outputs or not all(is_log_or_cache(p) for p in (*root.outputs, *root.explains)):
                continue
            noises = [_noise_in(runs, evidence, executor, traced_reference, path, Path(scratch))
                      for path in root.outputs]
            judged = [noise for noise in noises if noise is not None]
            if len(judged) == len(noises):  # every output's variants differ only in noise
                found[i] = _merged(judged)
    return found


def _noise_in(runs: Sequence[RunRecord], evidence: KeptVariants, executor: Executor, traced_reference: RunRecord,
              path: str, scratch: Path) -> Noise | None:
    variants = _variants(runs, evidence, executor, traced_reference, path, scratch)
    if len(variants) < 2:
        return None
    first, *others = variants
    judged = [noise_between(path, first, other) for other in others]
    return judged[0] if all(judged) else None


def _variants(runs: Sequence[RunRecord], evidence: KeptVariants, executor: Executor, traced_reference: RunRecord,
              path: str, scratch: Path) -> list[bytes]:
    """Distinct contents of one file: run 0's, the traced reference's, the kept blobs."""
    fetched = scratch / "traced"
    fetched.unlink(missing_ok=True)  # another file's, fetched before
    sources = [evidence.reference_tree / path]
    if executor.fetch(traced_reference, path, fetched):
        sources.append(fetched)
    digests = {r.manifest.entries[path].digest for r in runs
               if r.ok and r.manifest is not None and path in r.manifest.entries}
    sources += [evidence.blob(digest) for digest in sorted(digests)]
    contents: list[bytes] = []
    for source in sources:
        data = _read(source)
        if data is not None and data not in contents:
            contents.append(data)
    return contents


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES + 1)
    except OSError:
        return None


def _merged(noises: list[Noise]) -> Noise:
    kinds = tuple(dict.fromkeys(k for n in noises for k in n.kinds))
    return Noise(", ".join(n.path for n in noises), kinds, noises[0].example)
