"""What the commands' options share: paths that refuse '', ids, the store option, and the
values that are read as they are parsed (durations, job ranges, CPU lists, stabilisers, the
step audit's share). A bad value
is our one-line usage error, with the words it always had."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import click

from fuzzer.config import MAX_INT, parse_check_steps, parse_duration, parse_stabilizers, shown
from fuzzer.errors import UsageError
from fuzzer.model import available_cpus, cache_dir
from fuzzer.plan import format_cpus, parse_cpus, parse_jobs_range


class _Path(click.Path):
    """A path option that refuses '': Path('') would silently mean the current directory."""

    def convert(self, value, param, ctx):
        if value == "":
            self.fail("must not be empty", param, ctx)
        return super().convert(value, param, ctx)


PATH = _Path(path_type=Path)
ID = click.IntRange(0, MAX_INT)  # run and campaign numbers: SQLite integers


class Duration(str):
    """A duration as the user wrote it (the report's settings show that), and its seconds."""

    seconds: float


class JobsRange(str):
    """A job count range as the user wrote it, and its bounds."""

    bounds: tuple[int, int]


class _Read(click.ParamType):
    """A text option read into a `str` subclass that carries its meaning. Shown as TEXT in
    --help, as the plain text options are."""

    name = "text"

    def convert(self, value, param, ctx):
        return value if isinstance(value, str) and hasattr(value, self.meaning) else self.read(str(value))


class _Parsed(_Read):
    """Read by one of config's parsers, which raise our usage error: `carrier(text)` with the
    parsed value as its `meaning`."""

    def __init__(self, carrier: type[str], meaning: str, parse: Callable[[str], object]):
        self.carrier, self.meaning, self.parse = carrier, meaning, parse

    def read(self, text: str) -> str:
        value = self.carrier(text)
        setattr(value, self.meaning, self.parse(text))
        return value


class _JobsRangeType(_Read):
    meaning = "bounds"

    def read(self, text: str) -> JobsRange:
        jobs = JobsRange(text)
        try:
            jobs.bounds = parse_jobs_range(text)
        except ValueError as e:
            raise UsageError(str(e)) from None
        return jobs


class Rate(str):
    """A rate as the user wrote it ("5%" or 0.05), and its value in (0, 1)."""

    value: float


class _RateType(_Read):
    meaning = "value"

    def read(self, text: str) -> Rate:
        rate = Rate(text)
        try:
            number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            number = -1.0
        if not 0 < number < 1:
            raise click.BadParameter(f"expects a rate between 0 and 1 such as 5% or 0.05, got {shown(text)}")
        rate.value = number
        return rate


class Stabilizers(str):
    """--stabilizers as the user wrote it, and the candidates' own names."""

    names: tuple[str, ...]


class CheckSteps(str):
    """--check-steps as the user wrote it, and the share of the steps it audits."""

    share: float


class _CpuListType(click.ParamType):
    """`0-3,6`: CPUs this machine offers."""

    name = "text"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            cpus = parse_cpus(value)
        except ValueError:
            raise UsageError(f"--cpus expects a CPU list such as 0-3,6, got {shown(value)}") from None
        missing = sorted(set(cpus) - set(available_cpus()))
        if missing:
            raise UsageError(f"--cpus {shown(value)}: CPU {missing[0]} is not available here "
                             f"(available: {format_cpus(available_cpus())})")
        return cpus


DURATION = _Parsed(Duration, "seconds", parse_duration)
JOBS_RANGE = _JobsRangeType()
CPU_LIST = _CpuListType()
RATE = _RateType()
STABILIZERS = _Parsed(Stabilizers, "names", parse_stabilizers)
CHECK_STEPS = _Parsed(CheckSteps, "share", parse_check_steps)


def default_store(directory: Path) -> Path:
    """The store of campaigns started in `directory`, kept outside it: a store inside a source
    tree shows in `git status` and breaks `dpkg-source -b .`."""
    where = directory.absolute()
    return cache_dir() / "stores" / f"{where.name or 'root'}-{hashlib.sha256(bytes(where)).hexdigest()[:12]}"


def _remember_store(ctx: click.Context, param, value: Path | None) -> Path:
    """An internal error's traceback goes into the store, where the user looks for logs."""
    store = value if value is not None else default_store(Path.cwd())
    if isinstance(ctx.obj, dict):
        ctx.obj["store"] = store
    return store


store_option = click.option("--store", type=PATH, envvar="BUILDFUZZ_STORE", callback=_remember_store,
                            help="Store directory [default: one per current directory, in ~/.cache/buildfuzz/stores/].")
campaign_option = click.option("--campaign", type=ID, help="Campaign id (default: the latest).")

EXIT_CODES_HELP = """\b
Exit codes:
  0  reproducible: two or more successful builds, all identical
  1  unreproducible: builds differ, or one fails under some perturbation only
  2  bad usage or bad input (one line on stderr), or nothing was compared
  3  the reference build itself failed
  4  no verdict: interrupted, or fewer than two successful builds
  5  internal error (the traceback is in a log file)"""
