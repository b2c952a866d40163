"""A scenario's `expect.culprits`: several culprits, each with its own kind and stabilisers
(a build where several steps vary, each for its own reason), and no other."""

from __future__ import annotations

from typing import Callable, Iterable

from fuzzer.model import Culprit
from fuzzer.scenario_file import ExpectedCulprit


def every_culprit(expected: Iterable[ExpectedCulprit], culprits: Iterable[Culprit],
                  meets: Callable[[str, object, object], bool]) -> list[str]:
    """What is wrong: an expected culprit not named or named with another kind or
    stabilisers (`meets`, as the top culprit's expectations are judged), or a culprit no
    expectation names. Empty: every one is right."""
    problems, named = [], list(culprits)
    for want in expected:
        got = next((c for c in named if want.culprit in c.command), None)
        if got is None:
            problems.append(f"{want.culprit}: not named")
            continue
        named.remove(got)
        wrong = [f"{key} {getattr(got, key)}" for key in ("kind", "stabilized_by")
                 if getattr(want, key) is not None and not meets(key, getattr(want, key), getattr(got, key))]
        problems += [f"{want.culprit}: {', '.join(wrong)}"] if wrong else []
    return problems + [f"unexpected culprit {c.command}" for c in named]
