"""The campaign's configuration, validated once, frozen, free of click."""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from fuzzer import axes as axis_table
from fuzzer.errors import UsageError
from fuzzer.execute.dask_address import dask_local_workers
from fuzzer.escaping import shown  # also the name other modules import it by
from fuzzer.model import STABILIZERS, available_cpus

MAX_RUNS = 100_000  # an overnight campaign of 1-second builds runs ~30,000
MAX_INT = 2**63 - 1  # SQLite's INTEGER: seeds and campaign ids are stored there
MIN_SUCCESSFUL = 2  # a verdict compares at least two successful builds
PATH_MAX, NAME_MAX = 4096, 255  # Linux limits, in bytes




@dataclass(frozen=True)
class Outputs:
    report_json: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None

    @property
    def paths(self) -> tuple[Path | None, ...]:
        return self.report_json, self.junit, self.markdown, self.html

    @property
    def to_stdout(self) -> bool:
        """One report goes to standard output (`-`); the terminal's report then goes to stderr."""
        return STDOUT in self.paths


STDOUT = Path("-")  # a report path that means standard output, as `--report-json -`


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
    count_bookkeeping: bool = False  # build systems' bookkeeping decides the verdict too (fuzzer/compare/bookkeeping.py)
    jobs: tuple[int, int] = (1, 8)
    axes: tuple[str, ...] = axis_table.DEFAULT
    timeout: float | None = None
    in_place: bool = False
    clean: str | None = None
    resume: bool = False
    localize: bool = True
    stop_on_first: bool = False
    until_confidence: float | None = None  # build past --runs until clean builds bound a divergence below it (fuzzer/rates.py)
    diff_timeout: float = 30.0
    localize_budget_s: float | None = None  # None: what --budget leaves, else 3 builds' time (fuzzer/explain/budget.py)
    stabilizers: tuple[str, ...] = ()  # stabiliser candidates to try (empty: every one)
    check_steps: float | None = None  # --check-steps: the share of steps the audit replays (fuzzer/explain/audit.py)
    parallel: int = 1  # builds at once, each in its own mount namespace (fuzzer/tools/unshare.py)
    dask: str | None = None  # a Dask scheduler's address, or local:N (fuzzer/execute/dask_executor.py)
    shared_source: bool = False  # with dask: every worker reads --source at its path, no archive is sent
    outputs: Outputs = field(default_factory=Outputs)
    output_dirs: tuple[Path, ...] = ()  # --output: directories outside the tree the build writes into
    known: frozenset[str] = frozenset()  # finding ids that do not fail CI (--baseline; fuzzer/memory.py)



class StoredConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a resumed campaign must share with the original to continue it (the store's
    `campaigns.config`), and what else its runs depended on: the build path and the CPUs.
    Field names are FuzzConfig's; `output_dirs` is stored as `output`."""

    runs: int
    artifacts: tuple[str, ...]
    ignore: tuple[str, ...]
    jobs: tuple[int, int]
    axes: tuple[str, ...]
    timeout: float | None
    in_place: bool
    clean: str | None
    parallel: int = 1  # stores from before --parallel
    output_dirs: tuple[Path, ...] = msgspec.field(default=(), name="output")  # stores from before --output
    workspace: str | None = None  # stores from before the build path was recorded
    cpus: tuple[int, ...] | None = None  # stores from before the CPUs were recorded
    count_bookkeeping: bool = False
    # its negation, the key stores from before --count-bookkeeping hold (false: bookkeeping counted)
    default_ignore: bool = True

    def config(self, source: str, command: str, seed: int, store: Path) -> FuzzConfig:
        """The config a stored campaign ran with."""
        shared = {name: getattr(self, name) for name in self.__struct_fields__ if name in FuzzConfig.__dataclass_fields__}
        shared["count_bookkeeping"] = self.count_bookkeeping or not self.default_ignore
        return FuzzConfig(source=Path(source), command=command, store=store, seed=seed, **shared)


def stored_settings(config: FuzzConfig, workspace: str, cpus: tuple[int, ...]) -> StoredConfig:
    """What the store records of `config`, with the build path and the CPUs its runs use."""
    settings = msgspec.convert(config, StoredConfig, from_attributes=True)
    return msgspec.structs.replace(settings, workspace=workspace, cpus=cpus, default_ignore=not config.count_bookkeeping)


def max_jobs() -> int:
    """A job count beyond this only hangs the machine (make -j100000 forks until it stalls)."""
    return max(256, 4 * len(available_cpus()))


def max_parallel() -> int:
    """More builds at once than this only queue for the same CPUs and disk."""
    return max(64, len(available_cpus()))


def validate(config: FuzzConfig) -> FuzzConfig:
    """Every check that needs no build, so bad input fails before the store is touched."""
    _check_text(config)
    _check_path(config.source, "--source")
    _check_path(config.store, "--store")
    _check_source(config.source)
    if not config.command.strip():
        raise UsageError("no build command given (put it after --, e.g. buildfuzz run -- make -j{jobs})")
    _check_axes(config.axes)
    check_range("--runs", config.runs, MIN_SUCCESSFUL, MAX_RUNS)
    check_range("--seed", config.seed, 0, MAX_INT)
    check_jobs(config.jobs)
    check_range("--parallel", config.parallel, 1, max_parallel())
    if config.parallel > 1 and config.in_place:
        raise UsageError("--parallel needs a copy of the source per build; --in-place builds in the one source tree")
    for name, seconds in (("--timeout", config.timeout), ("--budget", config.budget_s),
                          ("--diff-timeout", config.diff_timeout), ("--localize-budget", config.localize_budget_s)):
        if seconds is not None:
            check_seconds(name, seconds)
    _check_stabilizers(config.stabilizers)
    if config.check_steps is not None:
        _check_audit(config.check_steps)
    if any(not glob for glob in config.artifacts + config.ignore):
        raise UsageError("--artifact and --ignore need a non-empty GLOB")
    if config.in_place and not config.clean:
        raise UsageError("--in-place needs --clean CMD, so every run starts from the same tree")
    if config.clean is not None and not config.in_place:
        raise UsageError("--clean is only for --in-place builds (other builds start from a fresh copy)")
    _check_dask(config)
    _check_output_dirs(config)
    if config.resume and not config.store.is_dir():
        raise UsageError(f"--resume: there is no store at {shown(config.store)}")
    return config


def check_range(name: str, value: int, lo: int, hi: int) -> int:
    if not lo <= value <= hi:
        raise UsageError(f"{name} must be between {lo} and {hi}, got {shown(value)}")
    return value


def check_seconds(name: str, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{name} must be a positive, finite number of seconds, got {value}")
    return value


def check_jobs(jobs: tuple[int, int]) -> tuple[int, int]:
    lo, hi = jobs
    if not 1 <= lo <= hi <= max_jobs():
        raise UsageError(f"--jobs range must satisfy 1 <= LO <= HI <= {max_jobs()} (max(256, 4 x CPUs)), "
                         f"got {shown(lo)}-{shown(hi)}")
    return jobs


def _check_axes(axes: tuple[str, ...]) -> None:
    unknown = [a for a in axes if a not in axis_table.BY_NAME]
    if unknown:
        raise UsageError(f"unknown axis {shown(unknown[0])}; known axes: {', '.join(axis_table.BY_NAME)}")
    if not axes:
        raise UsageError(f"no axis left to vary; --axes takes a comma-separated list of {', '.join(axis_table.BY_NAME)}")


def parse_stabilizers(text: str) -> tuple[str, ...]:
    """`--stabilizers ASLR,pythonhashseed` → the candidates' own names (any case)."""
    canonical = {name.lower(): name for name in STABILIZERS}
    words = [w.strip() for w in text.split(",") if w.strip()]
    if not words:
        raise UsageError(f"--stabilizers needs at least one name, of: {', '.join(STABILIZERS)}")
    names = tuple(dict.fromkeys(canonical.get(w.lower(), w) for w in words))
    _check_stabilizers(names)
    return names


def parse_check_steps(text: str) -> float:
    """`--check-steps all|10%|0.1` → the share of the steps to audit, in (0, 1]."""
    word = text.strip().lower()
    try:
        share = 1.0 if word == "all" else float(word[:-1]) / 100 if word.endswith("%") else float(word)
    except ValueError:
        share = math.nan
    if not (math.isfinite(share) and 0 < share <= 1):
        raise UsageError(f"--check-steps takes all, a percentage (10%) or a fraction in (0, 1], got {shown(text)}")
    return share


def _check_audit(share: float) -> None:
    from fuzzer.tools import strace

    if not (math.isfinite(share) and 0 < share <= 1):
        raise UsageError(f"--check-steps takes a fraction in (0, 1], got {share}")
    unusable = strace.STRACE.problem()
    if unusable:
        raise UsageError(f"--check-steps needs tracing: {unusable}")


def _check_stabilizers(names: tuple[str, ...]) -> None:
    unknown = [n for n in names if n not in STABILIZERS]
    if unknown:
        raise UsageError(f"unknown stabiliser {shown(unknown[0])} in --stabilizers; known: {', '.join(STABILIZERS)}")


def _check_dask(config: FuzzConfig) -> None:
    if config.dask is None:
        if config.shared_source:
            raise UsageError("--shared-source is for --dask: it says every worker reads --source at its path")
        return
    dask_local_workers(config.dask)
    if config.in_place:
        raise UsageError("--dask builds a copy of the source on each worker; --in-place builds in the one source tree")
    if config.output_dirs:
        raise UsageError("--output is for builds on this machine; Dask workers compare their tree only")
    if config.parallel > 1:
        raise UsageError("--parallel is for builds on this machine; with --dask, each worker's resource "
                         "'builds' (dask worker --resources builds=N) sets how many it runs at once")


def _check_output_dirs(config: FuzzConfig) -> None:
    """Every run empties each --output directory: never one holding the tree, the store or another."""
    source, store = config.source.resolve(), config.store.resolve()
    seen: list[Path] = []
    for given in config.output_dirs:
        _check_path(given, "--output")
        path = given.resolve()
        if not path.is_dir():
            raise UsageError(f"--output {shown(given)} is not a directory")
        places = ((source, "the source tree"), (store, "the store"), *((p, "another --output") for p in seen))
        for other, what in places:
            if path == other or path.is_relative_to(other) or other.is_relative_to(path):
                relation = "is" if path == other else "is inside" if path.is_relative_to(other) else "contains"
                raise UsageError(f"--output {shown(given)} {relation} {what}: it is emptied before every run")
        seen.append(path)


def _check_text(config: FuzzConfig) -> None:
    """Everything stored or reported must be valid UTF-8 (the store and the JSON report are)
    and free of NUL characters."""
    texts = [("the build command", config.command), ("--source", str(config.source)),
             ("--store", str(config.store)), ("--clean", config.clean or "")]
    texts += [("--artifact", glob) for glob in config.artifacts] + [("--ignore", glob) for glob in config.ignore]
    texts += [("--output", str(path)) for path in config.output_dirs]
    for name, text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(f"{name} is not valid UTF-8: {shown(text)}") from None
        if "\0" in text:  # argv cannot hold one, a scenario file can; exec and open refuse it
            raise UsageError(f"{name} contains a NUL character: {shown(text)}")


def _check_path(path: Path, name: str) -> None:
    """Too long a path makes every later file call fail with ENAMETOOLONG: say so once."""
    data = os.fsencode(path)
    longest = max((len(part) for part in data.split(b"/")), default=0)
    if len(data) >= PATH_MAX or longest > NAME_MAX:
        raise UsageError(f"{name} path is too long ({len(data)} bytes; Linux allows {PATH_MAX - 1}, "
                         f"{NAME_MAX} per name): {shown(path)}")


def _check_source(source: Path) -> None:
    try:
        is_dir = stat.S_ISDIR(source.stat().st_mode)
    except FileNotFoundError:
        is_dir = False
    except OSError as e:
        raise UsageError(f"source directory {shown(source)} cannot be used: {e.strerror}") from None
    if not is_dir:
        raise UsageError(f"source directory {shown(source)} does not exist or is not a directory")


def parse_duration(text: str) -> float:
    """`8h`, `30m`, `90s`, `1h30m` or plain seconds → seconds."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise UsageError(f"cannot read duration {shown(text)}; use e.g. 8h, 30m, 90s or 1h30m")
    scale = {"h": 3600, "m": 60, "s": 1}
    return sum(float(n) * scale[u] for n, u in parts)
