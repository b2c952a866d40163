"""Temporary names: the parts of a name a tool makes up anew every run, blanked.

gcc writes `/tmp/ccVIeq8g.s`, mktemp `tmp.Xk3f9QaB2c`, CMake's try-compile checks build
in `CMakeFiles/CMakeScratch/TryCompile-I1rsuL` a target `cmTC_f1560`, a script names a
file after its pid. None of that says what a step is or what went wrong, yet it shows in
commands, working directories, logs and error lines. Each pattern here keeps what is
stable (`TryCompile-`, the name before `.XXXXXX`) and replaces only the random part by
`X`s, so two names that differ only in their random part become equal, and nothing
else does. One module, so that step identity, finding ids, failure comparisons and the
known-noise judgement of logs all agree on what is random.

Every function here is pure; the patterns work on text and on bytes alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import AnyStr


@dataclass(frozen=True)
class NameKind:
    """One kind of random name: what the report calls it, and its (pattern, replacement)s."""

    name: str
    rules: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        compiled = tuple((re.compile(p), r) for p, r in self.rules)
        binary = tuple((re.compile(p.encode()), r.encode()) for p, r in self.rules)
        object.__setattr__(self, "_text", compiled)
        object.__setattr__(self, "_bytes", binary)

    def _compiled(self, value: str | bytes):
        return self._bytes if isinstance(value, bytes) else self._text  # type: ignore[attr-defined]  # set in __post_init__

    def blanked(self, value: AnyStr) -> AnyStr:
        """`value` with every name of this kind replaced by its placeholder."""
        for pattern, replacement in self._compiled(value):
            value = pattern.sub(replacement, value)
        return value

    def found(self, value: AnyStr) -> list[AnyStr]:
        """The names of this kind in `value`, rule by rule as `blanked` replaces them (to tell
        which kinds differ between two texts, and show one)."""
        names = []
        for pattern, replacement in self._compiled(value):
            names += [m.group() for m in pattern.finditer(value)]
            value = pattern.sub(replacement, value)
        return names


# Order matters: the specific names go first, so that `TryCompile-I1rsuL` keeps its prefix
# rather than being taken for a generic mkstemp name.
TEMPORARY_FILES = NameKind("names of temporary files", (
    (r"\bTryCompile-[A-Za-z0-9]{6}\b", "TryCompile-XXXXXX"),  # CMake's try-compile directories
    (r"\bcmTC_[0-9a-f]{5}\b", "cmTC_XXXXX"),  # ... and their targets
    (r"(?<![\w/.])/(?:var/)?tmp/[\w.+-]+", "/tmp/XXXXXX"),  # anything directly under /tmp
    (r"\bcc[A-Za-z0-9]{6}(?=\.[a-z]{1,3}\b)", "ccXXXXXX"),  # gcc's temporaries wherever TMPDIR points
    (r"\btmp\.[A-Za-z0-9]{10}\b", "tmp.XXXXXXXXXX"),  # mktemp's default template
    # mkstemp's name.XXXXXX (a placeholder already put there is not taken again)
    (r"\b([\w-]+[.-])(?!X{6}\b)(?=[a-z0-9]{0,5}[A-Z])[A-Za-z0-9]{6}\b", r"\1XXXXXX"),
))
PROCESS_IDS = NameKind("process ids", (
    (r"(?i)\b(pid\b\D{0,3})\d+", r"\1N"),  # pid 4242, pid=4242, PID: 4242
    (r"(?<=[A-Za-z_])\[\d{1,7}\](?=:)", "[N]"),  # configure[4242]: (syslog style)
    (r"/proc/\d+", "/proc/N"),
))
KINDS = (TEMPORARY_FILES, PROCESS_IDS)


@lru_cache(maxsize=1 << 16)  # step keys are asked for again and again; commands repeat
def normalised(text: str) -> str:
    """`text` (a command, a directory, an error line) with temporary names and pids blanked:
    equal for two runs of the same step or the same failure."""
    for kind in KINDS:
        text = kind.blanked(text)
    return text


def identity(command: str, cwd: str) -> tuple[str, str]:
    """What makes two steps of different runs the same step, besides their occurrence: a
    try-compile's `cc -o cmTC_f1560` in `TryCompile-I1rsuL` is the next run's `cc -o
    cmTC_7b6b4` in `TryCompile-HFYb0B`."""
    return normalised(command), normalised(cwd)


def renamed(a: set[str], b: set[str]) -> set[str]:
    """The paths of `a` and of `b`, each missing from the other, that the other has under
    another temporary name: one try-compile's `TryCompile-I1rsuL/src.c` is the other run's
    `TryCompile-HFYb0B/src.c`, not a file one run looked at and the other did not."""
    only_a, only_b = a - b, b - a
    common = {normalised(p) for p in only_a} & {normalised(p) for p in only_b}
    return {p for p in only_a | only_b if normalised(p) in common}
