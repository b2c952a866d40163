"""The `buildfuzz replay` command lines the reports print, built in one place: of a stored
run (`--run N`), or of a perturbation given axis by axis (a minimal reproducer, a targeted
run that confirmed its hazard)."""

from __future__ import annotations

import shlex

from fuzzer.plan import Perturbation, format_cpus


def of_run(store: str, campaign: int, run: int) -> str:
    return shlex.join([*_replay(store, campaign), "--run", str(run)])


def of_perturbation(store: str, campaign: int, p: Perturbation) -> str:
    words = [*_replay(store, campaign), "--jobs", str(p.jobs), "--cpus", format_cpus(p.cpus)]
    if p.jitter:
        words += ["--jitter", str(p.jitter), "--jitter-seed", str(p.seed)]
    for name, value in p.variations:
        words += ["--vary", f"{name}={value}"]
    return shlex.join(words)


def _replay(store: str, campaign: int) -> list[str]:
    return ["buildfuzz", "replay", "--store", store, "--campaign", str(campaign)]
