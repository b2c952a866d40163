"""The axes a build is varied along: one table, one entry per axis.

Like reprotest's ordered variations, each entry says in one place what an axis is: its
name and label, its value in the reference build, the values tried early (extremes),
how to draw one, how it is applied to a build, what it needs installed, and how it
shows in reports. The schedule, the comparison (which axis separates the variants),
ablation (which axes a reproducer needs), `buildfuzz replay --vary`, the HTML chart and
the CLI's `--axes`/`--vary` all read this table; executors apply it through `launch()`
and `mounted()`, so an axis behaves the same wherever the build runs.

Four groups:
- schedule (`jobs`, `cpus`, `jitter`): on by default; they are the fields of every
  `Perturbation`, drawn from the campaign's `Space`;
- order (`shuffle`: make's prerequisite order, `dirorder`: directory entry order through
  disorderfs): on by default where their tool exists, said once where it does not;
- environment (`tz`, `locale`, `umask`, `user`, `buildpath`, `hostname`, `home`, `execpath`,
  `aslr`, `hashseed`, `clock`, `frozenclock`): opt-in with `--vary`, since a fixed
  environment (above all one build path) is how buildfuzz separates parallelism from
  everything else.
- targeted (`hold`): never drawn at random; the guided schedule (fuzzer.guided) sets it
  to hold one traced step back and flip the order of two unordered steps.
Order, environment and targeted values live in `Perturbation.variations`; a missing
name means the reference value (the build's own environment, untouched). A build's values
are applied in the table's order, each wrapping the command as the ones above left it: the
user axis comes before those that enter a namespace, since a build already running as
another uid may not make one.
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import msgspec

from fuzzer import axis_values
from fuzzer.axis_values import Launch
from fuzzer.errors import UsageError
from fuzzer.model import Reason
from fuzzer.parallelism import command_argv, parallel_env, render_command
from fuzzer.plan import Perturbation, Planned, Space, format_cpus, phases, smallest_runs
from fuzzer.tools import disorderfs, faketime, make, setarch, unshare

SCHEDULE, ORDER, ENVIRONMENT, TARGETED = "schedule", "order", "environment", "targeted"
REFERENCE = ""  # the value of an order or environment axis in the reference build


@dataclass(frozen=True)
class Axis:
    name: str  # as in --axes, --vary, replay --vary and the JSON report
    label: str  # for people
    group: str  # schedule | order | environment
    # how the axis shows in comparisons and charts: (facet name, value of a perturbation)
    facets: tuple[tuple[str, Callable[[Perturbation], object]], ...]
    reset: Callable[[Perturbation, Perturbation], Perturbation]  # (p, reference) → p with this axis as in the reference
    extremes: tuple[str, ...] = ()  # order/environment: values tried early, one run each
    sample: Callable[[random.Random], str] | None = None  # order/environment: a random value
    apply: Callable[[str, Launch], Launch] | None = None  # order/environment: change the launch
    setup: Callable[[str, Path], contextlib.AbstractContextManager] | None = None  # around the build (mounts)
    requires: Callable[[], str | None] = lambda: None  # None when usable here, else why not
    values: str = ""  # what `--vary NAME=VALUE` accepts, for messages
    # what a sample is when every sample is a fresh seed, never drawn twice ("seeds"); such
    # an axis's sampled runs are independent trials, and the report gives them their own bound
    fresh: str = ""
    share: float = 0.0  # the least share of the drawn runs that vary it (fuzzer.axes.planned)
    accepts: Callable[[str], bool] = lambda value: True  # `--vary NAME=VALUE`: beyond VALID_VALUE
    # the programs that read its value (make, for --shuffle in MAKEFLAGS): a build whose
    # traced run ran none of them is not varied along it; () = every build reads it
    read_by: tuple[str, ...] = ()

    def value(self, p: Perturbation) -> str:
        return dict(p.variations).get(self.name, REFERENCE)


# --- the table ------------------------------------------------------------------------------


def _reset_field(name: str):
    def reset(p: Perturbation, reference: Perturbation) -> Perturbation:
        if name == "jitter":
            return msgspec.structs.replace(p, jitter=0.0, seed=0)
        return msgspec.structs.replace(p, **{name: getattr(reference, name)})

    return reset


def _reset_variation(name: str):
    def reset(p: Perturbation, reference: Perturbation) -> Perturbation:
        return p.with_variation(name, dict(reference.variations).get(name, REFERENCE))

    return reset


def _variation(name: str, label: str, group: str, extremes: tuple[str, ...], sample, values: str,
               apply=None, setup=None, requires=lambda: None, fresh: str = "", share: float = 0.0,
               accepts: Callable[[str], bool] = lambda value: True, read_by: tuple[str, ...] = ()) -> Axis:
    facet = ((name, lambda p: dict(p.variations).get(name, "as given")),)
    return Axis(name, label, group, facet, _reset_variation(name), extremes, sample, apply, setup, requires, values,
                fresh, share, accepts, read_by)



TIMEZONES = ("Etc/GMT+12", "Etc/GMT-14", "America/St_Johns", "Asia/Kathmandu", "UTC")
CLOCK_OFFSETS = ("+397d", "-3650d", "+12345678s")

AXES: tuple[Axis, ...] = (
    Axis("jobs", "jobs", SCHEDULE, (("jobs", lambda p: p.jobs),), _reset_field("jobs")),
    Axis("cpus", "CPUs", SCHEDULE, (("cpus", lambda p: p.ncpus), ("cpu set", lambda p: format_cpus(p.cpus))),
         _reset_field("cpus")),
    Axis("jitter", "jitter", SCHEDULE, (("jitter", lambda p: p.jitter > 0),), _reset_field("jitter")),
    # `reverse` is one fixed order: tried once, as the extreme; every sample is a new seed,
    # and a third of the drawn runs shuffle (one seed in three broke a Debian package at -j1)
    _variation("shuffle", "make prerequisite order", ORDER, ("reverse",), axis_values.seed, "reverse or a seed",
               apply=axis_values.make_flag, requires=make.shuffle_problem, fresh="seeds", share=1 / 3,
               read_by=make.NAMES),
    _variation("dirorder", "directory entry order", ORDER, ("reverse",),
               lambda rng: rng.choice(("reverse", "shuffle")), "reverse or shuffle",
               setup=axis_values.disordered, requires=disorderfs.DISORDERFS.problem),
    _variation("tz", "time zone", ENVIRONMENT, ("Etc/GMT-14",), lambda rng: rng.choice(TIMEZONES),
               "a TZ value", apply=axis_values.with_env(TZ="{}")),
    _variation("locale", "locale", ENVIRONMENT, ("POSIX",), lambda rng: rng.choice(("C", "C.UTF-8", "POSIX")),
               "an installed locale", apply=axis_values.with_env(LC_ALL="{}", LANG="{}")),
    _variation("umask", "umask", ENVIRONMENT, ("0002",), lambda rng: rng.choice(("0002", "0022", "0077")),
               "an octal umask", apply=axis_values.wrapped(axis_values.umask)),
    _variation("user", "user and group ids", ENVIRONMENT, ("4242",), axis_values.uid,
               "a uid (1 to 65533), also the gid", apply=axis_values.wrapped(unshare.as_user),
               requires=unshare.user_problem, fresh="user ids", accepts=axis_values.is_uid),
    _variation("buildpath", "build path", ENVIRONMENT, ("elsewhere",),
               lambda rng: rng.choice(("p", "a-much-longer-build-path")), "a directory name",
               apply=axis_values.elsewhere, requires=unshare.UNSHARE.problem),
    _variation("hostname", "host name", ENVIRONMENT, ("buildfuzz-host",), lambda rng: f"host-{axis_values.seed(rng)}",
               "a host name", apply=axis_values.wrapped(lambda name, argv: unshare.with_hostname(name, argv)),
               requires=unshare.hostname_problem, fresh="host names"),
    _variation("home", "HOME and user name", ENVIRONMENT, ("/nonexistent/buildfuzz",),
               lambda rng: f"/nonexistent/{axis_values.seed(rng)}", "a directory path",
               apply=axis_values.with_env(HOME="{}", USER="buildfuzz", LOGNAME="buildfuzz"), fresh="home directories"),
    _variation("execpath", "program search path (PATH)", ENVIRONMENT, ("/nonexistent/buildfuzz-path",),
               lambda rng: f"/nonexistent/path-{axis_values.seed(rng)}", "a directory path, appended to PATH",
               apply=axis_values.on_path, fresh="directories"),
    _variation("aslr", "address-space randomisation", ENVIRONMENT, ("off",), lambda rng: "off", "off",
               apply=axis_values.wrapped(axis_values.aslr), requires=setarch.SETARCH.problem),
    _variation("hashseed", "Python hash seed", ENVIRONMENT, ("0",), axis_values.seed, "a whole number",
               apply=axis_values.with_env(PYTHONHASHSEED="{}"), fresh="seeds"),
    _variation("clock", "clock offset", ENVIRONMENT, ("+397d",), lambda rng: rng.choice(CLOCK_OFFSETS),
               "an offset such as +397d or -3650d", apply=axis_values.wrapped(axis_values.clock),
               requires=faketime.FAKETIME.problem),
    _variation("frozenclock", "clock frozen for the whole build", ENVIRONMENT, ("2000-01-01",), axis_values.date,
               "a day as YYYY-MM-DD, from 1970", apply=axis_values.wrapped(axis_values.frozen),
               requires=faketime.FAKETIME.problem, fresh="days", accepts=axis_values.is_day),
    _variation("hold", "one step held back", TARGETED, (), None, "MILLISECONDS@ARGV-HASH (from a report)",
               apply=axis_values.held, requires=axis_values.hold_problem),
)
BY_NAME = {axis.name: axis for axis in AXES}
DEFAULT = tuple(a.name for a in AXES if a.group in (SCHEDULE, ORDER, TARGETED))
OPT_IN = tuple(a.name for a in AXES if a.group == ENVIRONMENT)
VARIED = frozenset({ORDER, ENVIRONMENT})  # drawn by the schedule when named in --axes
# ablation puts axes back to the reference in this order: timing first (a reproducer
# without jitter is the easiest to run), the build's own parallelism last
ABLATION_ORDER = ("jitter", *(a.name for a in AXES if a.group != SCHEDULE), "cpus", "jobs")
VALID_VALUE = re.compile(r"[A-Za-z0-9_+\-./:@]{1,64}")


def with_all(names: list[str]) -> list[str]:
    """`all` (as in `--vary all`) stands for every environment axis; those that cannot run
    here are off, as when named one by one, and the report's scope says why."""
    environment = [a.name for a in AXES if a.group == ENVIRONMENT]
    return [n for name in names for n in (environment if name == "all" else [name])]


def variation_axes(names: tuple[str, ...]) -> tuple[Axis, ...]:
    """The order/environment axes among `names` that can run here."""
    return tuple(BY_NAME[n] for n in names if BY_NAME[n].group in VARIED and BY_NAME[n].requires() is None)


def unavailable(names: tuple[str, ...]) -> list[str]:
    """One line per requested axis whose tool is missing here."""
    return [f"axis {n} ({BY_NAME[n].label}) is off: {why}" for n in names if (why := BY_NAME[n].requires())]


def which_make(names: tuple[str, ...]) -> list[str]:
    """For the report: which make every build finds first on its PATH (whether the build runs
    make at all is its own affair), with the shuffle axis asked for or
    buildfuzz[shuffle]'s make put first on PATH."""
    found = make.for_builds()
    return [f"make: the make on every build's PATH was {found.describe()}"] if found and ("shuffle" in names or found.packaged) else []


def parse_variation(text: str) -> tuple[str, str]:
    """`NAME=VALUE` for replay --vary; raises ValueError with a readable message."""
    name, sep, value = text.partition("=")
    axis = BY_NAME.get(name)
    if not sep or axis is None or axis.group == SCHEDULE:
        names = ", ".join(a.name for a in AXES if a.group != SCHEDULE)
        raise ValueError(f"--vary expects NAME=VALUE with NAME one of {names}, got {text!r}")
    if not VALID_VALUE.fullmatch(value) or not axis.accepts(value):
        raise ValueError(f"--vary {name}= expects {axis.values}, got {value!r}")
    return name, value


def require_usable(p: Perturbation) -> None:
    """Refuse (UsageError, exit 2) a perturbation with a variation whose tool is missing here."""
    off = [f"{name}={value} here: {why}" for name, value in p.variations if (why := BY_NAME[name].requires())]
    if off:
        raise UsageError(f"cannot apply --vary {off[0]}; the build would run without it")


# --- the schedule ---------------------------------------------------------------------------

VARY_CHANCE = 0.5  # each varied axis takes a drawn value in about half the sampled runs


def schedule(space: Space, seed: int, varied: tuple[Axis, ...]) -> Iterator[Perturbation]:
    return (p.perturbation for p in planned(space, seed, varied))


def planned(space: Space, seed: int, varied: tuple[Axis, ...], scan: bool = False) -> Iterator[Planned]:
    """plan's schedule, with the order and environment axes added: after the schedule's
    extremes, one run per axis extreme (at the most parallel setting), then each sample
    varies each axis half the time. They draw from their own random stream, so the
    schedule axes' values are the same with or without them. An axis with a share varies
    at least that share (rounded up: a budget may stop after two runs) of every prefix of
    the runs after the reference: a run that would leave it short takes a fresh sample, an
    extreme too. A `scan` (the first drawn run, traced: does the build run an axis's
    readers?) varies no axis with readers, and the share is kept from the second run on."""
    first, extremes, samples = phases(space, seed)
    draw = _Draws(random.Random(f"{seed}/variations"), varied, scan)
    yield Planned(first, Reason.REFERENCE)
    yield from (draw.keep_shares(Planned(p, Reason.EXTREME)) for p in extremes)
    for axis in varied:
        for value in axis.extremes:
            p = Perturbation(space.jobs[1], space.cpus).with_variation(axis.name, value)
            yield draw.keep_shares(Planned(p, Reason.EXTREME))
    for p in samples:
        for axis in varied:
            if draw.rng.random() < VARY_CHANCE:
                p = p.with_variation(axis.name, draw.sample(axis))
        yield draw.keep_shares(Planned(p, Reason.SAMPLE))


def share_due(share: float, drawn: int, scan: bool) -> int:
    """How many of the first `drawn` runs vary an axis with `share` (none when only the scan ran)."""
    return 0 if scan and drawn <= 1 else math.ceil(drawn * share - 1e-9)


class _Draws:
    """The order and environment axes' random stream, the fresh values each has drawn, and
    how many drawn runs varied each axis that has a share."""

    def __init__(self, rng: random.Random, varied: tuple[Axis, ...], scan: bool):
        self.rng, self.varied, self.scan, self.runs = rng, varied, scan, 0
        self.used = {a.name: set(a.extremes) for a in varied if a.fresh}
        self.varying = {a.name: 0 for a in varied if a.share}

    def sample(self, axis: Axis) -> str:
        value = axis.sample(self.rng)
        while value in self.used.get(axis.name, ()):  # a fresh axis never draws a value twice
            value = axis.sample(self.rng)
        self.used.get(axis.name, set()).add(value)
        return value

    def keep_shares(self, planned: Planned) -> Planned:
        self.runs += 1
        p = planned.perturbation
        if self.scan and self.runs == 1:  # the scan's trace decides whether a read_by axis means anything
            p = functools.reduce(lambda q, axis: q.with_variation(axis.name, REFERENCE),
                                 [a for a in self.varied if a.read_by], p)
        for axis in self.varied:
            if not axis.share:
                continue
            value = dict(p.variations).get(axis.name)
            if value is None and self.varying[axis.name] < share_due(axis.share, self.runs, self.scan):
                p = p.with_variation(axis.name, value := self.sample(axis))
            self.varying[axis.name] += value is not None
        return Planned(p, planned.reason)


def unread(varied: tuple[Axis, ...], ran: frozenset[str]) -> tuple[str, ...]:
    """The varied axes none of whose readers is among the programs `ran` (names, as run)."""
    return tuple(a.name for a in varied if a.read_by and not ran & set(a.read_by))


def promised(varied: tuple[Axis, ...]) -> tuple[str, ...]:
    """The axes asked for with --vary (the environment ones), each promised a run of its own
    within the first runs: a verdict that skipped one would answer another question."""
    return tuple(a.name for a in varied if a.group == ENVIRONMENT and a.extremes)


def not_run(varied: tuple[Axis, ...], ran: list[Perturbation], why: str) -> list[str]:
    """For the report: each promised axis that no run varied (the budget ran out first)."""
    seen = {name for p in ran for name, _ in p.variations}
    return [f"--vary {name}: no run varied the {BY_NAME[name].label} ({why}): the verdict says nothing about it"
            for name in promised(varied) if name not in seen]


def require_runs(runs: int, varied: tuple[Axis, ...]) -> None:
    """Refuse (UsageError, exit 2) a --runs too small to vary every promised axis."""
    names = promised(varied)
    if runs < smallest_runs(names):
        raise UsageError(f"--runs {runs} is too small for --vary {','.join(names)}: the reference and one run per "
                         f"varied axis need --runs {smallest_runs(names)} or more")


# --- applying a perturbation ----------------------------------------------------------------


def launch(template: str, p: Perturbation, base_env: dict[str, str], tree: Path | None = None) -> Launch:
    """The argv, environment and CPU set of one build under `p`, whose tree is at `tree`."""
    env = make.path_env({**base_env, **parallel_env(p.jobs, base_env)})  # the make with --shuffle, in every build
    start = Launch(tuple(command_argv(render_command(template, p.jobs))), env, p.cpus, tree)
    values = dict(p.variations)
    for axis in AXES:  # in the table's order (see above)
        if axis.name in values and axis.apply is not None:
            start = axis.apply(values[axis.name], start)
    return start


@contextlib.contextmanager
def mounted(p: Perturbation, tree: Path) -> Iterator[None]:
    """Whatever the axes set up around a build (disorderfs), torn down however it ends."""
    with contextlib.ExitStack() as stack:
        for name, value in p.variations:
            axis = BY_NAME.get(name)
            if axis is not None and axis.setup is not None:
                stack.enter_context(axis.setup(value, tree))
        yield


def facets(p: Perturbation) -> dict[str, object]:
    """Every facet of every axis, for the comparison and the chart."""
    return {name: get(p) for axis in AXES for name, get in axis.facets}
