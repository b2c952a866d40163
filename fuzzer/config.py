"""The campaign's configuration, validated once, frozen, free of click."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.plan import AXES


class UsageError(Exception):
    """Bad usage or bad input: one line for the user, exit code 2."""


@dataclass(frozen=True)
class Outputs:
    report_json: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None


@dataclass(frozen=True)
class FuzzConfig:
    source: Path
    command: str
    store: Path
    runs: int = 20
    budget_s: float | None = None
    seed: int = 0
    artifacts: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    default_ignore: bool = True
    jobs: tuple[int, int] = (1, 8)
    axes: tuple[str, ...] = AXES
    timeout: float | None = None
    in_place: bool = False
    clean: str | None = None
    resume: bool = False
    localize: bool = True
    stop_on_first: bool = False
    diff_timeout: float = 30.0
    outputs: Outputs = field(default_factory=Outputs)

    def to_json(self) -> dict:
        """What a resumed campaign must share with the original to continue it."""
        return {
            "runs": self.runs,
            "artifacts": list(self.artifacts),
            "ignore": list(self.ignore),
            "default_ignore": self.default_ignore,
            "jobs": list(self.jobs),
            "axes": list(self.axes),
            "timeout": self.timeout,
            "in_place": self.in_place,
            "clean": self.clean,
        }


def stored_config(source: str, command: str, seed: int, store: Path, data: dict) -> FuzzConfig:
    """The config a stored campaign ran with (inverse of `FuzzConfig.to_json`)."""
    return FuzzConfig(
        source=Path(source),
        command=command,
        store=store,
        seed=seed,
        runs=data["runs"],
        artifacts=tuple(data["artifacts"]),
        ignore=tuple(data["ignore"]),
        default_ignore=data["default_ignore"],
        jobs=tuple(data["jobs"]),
        axes=tuple(data["axes"]),
        timeout=data["timeout"],
        in_place=data["in_place"],
        clean=data["clean"],
    )


def validate(config: FuzzConfig) -> FuzzConfig:
    if not config.source.is_dir():
        raise UsageError(f"source directory {str(config.source)!r} does not exist or is not a directory")
    if not config.command.strip():
        raise UsageError("no build command given (put it after --, e.g. buildfuzz run -- make -j{jobs})")
    unknown = [a for a in config.axes if a not in AXES]
    if unknown:
        raise UsageError(f"unknown axis {unknown[0]!r}; known axes: {', '.join(AXES)}")
    if config.runs < 1:
        raise UsageError("--runs must be at least 1")
    if config.in_place and not config.clean:
        raise UsageError("--in-place needs --clean CMD, so every run starts from the same tree")
    if config.timeout is not None and config.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    return config


def parse_duration(text: str) -> float:
    """`8h`, `30m`, `90s`, `1h30m` or plain seconds → seconds."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise UsageError(f"cannot read duration {text!r}; use e.g. 8h, 30m, 90s or 1h30m")
    scale = {"h": 3600, "m": 60, "s": 1}
    return sum(float(n) * scale[u] for n, u in parts)


def available_cpus() -> tuple[int, ...]:
    return tuple(sorted(os.sched_getaffinity(0)))
