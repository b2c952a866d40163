"""jitter: seeded timing perturbation of a live build's process tree.

Random priorities alone miss ordering bugs: they change nothing when CPUs are idle or a
job sleeps on IO. So the engine mainly *suspends* processes (SIGSTOP ... SIGCONT) for
windows drawn log-uniformly between 1 ms and 0.5 s, which delays a job whatever it is
doing. New processes are favoured — a process stopped right after fork/exec is where
ordering races live — and long-lived ones, the build driver included (stopping it delays
job launches), get stopped again now and then. It also raises nice values (0..19) of new
processes, never of the first one seen: everything the driver launches would inherit it.

Determinism: every process, in order of arrival, gets its own random stream drawn from
`random.Random(seed)`; that stream alone decides its arrival stop, nice value, and the
sequence of its stop windows and gaps. The same seed therefore makes the same decisions
given the same process arrivals; the caps only decide when they happen (see below).

Caps, so builds still finish: at most 1 (intensity < 0.5) or 2 processes stopped at once,
and stopped process-time at most 0.5 × intensity of the wall time, i.e. on average at most
half a process stopped. That time cap is a budget (with a 0.1 s head start, so the first
arrivals can be stopped) which a stop may overdraw by its own window: a due stop waits
while the budget is overdrawn, then runs whole. Windows thus stay as drawn, a long one
needs no more credit than a short one (so cheaper stops cannot starve it), and over a
build the share converges on the cap. Measuring against wall time rather than summed process lifetimes bounds the
slowdown however serial the build is: its critical path is stalled at most that share of
the time, so it runs at most 1 / (1 − 0.5 × intensity) times as long (2× at intensity 1),
plus at most one overdraft (≤ 1 s). Summed lifetimes would count a driver idly waiting on
its one job, and let the engine keep a serial build's only working process stopped.
"""

from __future__ import annotations

import math
import random
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable

import psutil

MIN_WINDOW, MAX_WINDOW = 0.001, 0.5
STOP_RATE = 10.0  # stops per second of a process's life, at intensity 1
ARRIVAL_STOP = 0.5  # chance a new process is stopped as soon as it is seen, at intensity 1
SHARE = 0.5  # cap on stopped process-time per second of wall time, at intensity 1
GRACE = 0.1  # seconds of wall time credited up front, so the very first arrivals can be stopped
POLL = 0.004  # compilers live tens of ms; poll well below that
MAX_CPU = 0.05  # stretch the poll interval so polling costs at most this share of a core
COMMAND_CHARS = 80


@dataclass(frozen=True)
class JitterEvent:
    at: float  # seconds since the engine started
    pid: int
    command: str  # short command line of the target
    action: str  # "stop" or "nice"
    value: float  # stop window in seconds, or the nice value


@dataclass
class _Plan:
    """One process's own random stream and its next stop."""

    rng: random.Random
    due: float  # engine time at which the next stop should start
    window: float  # length of that stop


def _nothing() -> set[int]:
    return set()


class Jitter:
    """Perturbs the processes `processes()` returns, from a background thread. A context manager."""

    def __init__(
        self,
        intensity: float,
        seed: int,
        processes: Callable[[], list[psutil.Process]],
        *,
        exclude: Callable[[], set[int]] = _nothing,
    ) -> None:
        if not 0.0 <= intensity <= 1.0:
            raise ValueError(f"jitter intensity must be within 0..1, got {intensity}")
        self._intensity = intensity
        self._rng = random.Random(seed)
        self._processes = processes
        self._exclude = exclude
        self._events: list[JitterEvent] = []
        self._plans: dict[psutil.Process, _Plan] = {}
        self._seen: set[psutil.Process] = set()
        self._stopped: dict[psutil.Process, float] = {}  # → engine time to resume it
        # what the engine holds stopped, for other threads: published before SIGSTOP and
        # after SIGCONT, so a process stopped by the engine is never seen missing from it
        self._stopped_pids: frozenset[int] = frozenset()
        self._max_stopped = 1 if intensity < 0.5 else 2
        self._share = SHARE * intensity
        self._stopped_seconds = 0.0  # committed stop time (actual, once resumed)
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._t0 = time.monotonic()
        self._last_tick = 0.0
        self._interval = POLL

    def __enter__(self) -> "Jitter":
        if self._intensity > 0:
            self._t0 = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="buildfuzz-jitter", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._halt.set()
            self._thread.join()  # the thread resumes what it stopped, even if this join is interrupted
            self._thread = None
        if self._error is not None and exc[0] is None:
            raise self._error

    @property
    def events(self) -> tuple[JitterEvent, ...]:
        return tuple(self._events)

    def stopped_pids(self) -> frozenset[int]:
        """Pids the engine has stopped and not yet resumed (thread-safe): the guard's check
        for self-stopped builds must not mistake these for a build that stopped itself."""
        return self._stopped_pids

    # -- the engine thread

    def _now(self) -> float:
        return time.monotonic() - self._t0

    def _run(self) -> None:
        try:
            while True:
                started = time.thread_time()
                self._tick(self._now())
                self._interval = max(POLL, (time.thread_time() - started) / MAX_CPU)
                if self._halt.wait(self._sleep()):
                    return
        except BaseException as e:  # surfaced by __exit__
            self._error = e
        finally:
            for process in list(self._stopped):
                self._resume(process)

    def _sleep(self) -> float:
        """Until the next poll, or sooner when a stop window ends."""
        wake = self._last_tick + self._interval
        for until in self._stopped.values():
            wake = min(wake, until)
        return max(0.0, wake - self._now())

    def _tick(self, now: float) -> None:
        for process, until in list(self._stopped.items()):
            if until <= now:
                self._resume(process)
        live = self._live()
        self._last_tick = now
        for process in sorted((p for p in live if p not in self._seen), key=_birth):
            self._arrive(process, now)
        self._plans = {p: plan for p, plan in self._plans.items() if p in live}  # keeps arrival order
        # newest first: when the caps allow only some stops, new processes get them
        for process, plan in reversed(self._plans.items()):
            if plan.due <= now and process not in self._stopped:
                self._try_stop(process, plan, now)

    def _live(self) -> set[psutil.Process]:
        try:
            processes = self._processes()
        except psutil.Error:
            return set()
        excluded = self._exclude()
        return {p for p in processes if p.pid not in excluded}

    def _arrive(self, process: psutil.Process, now: float) -> None:
        first = not self._seen
        self._seen.add(process)
        rng = random.Random(self._rng.getrandbits(64))
        stop_now = rng.random() < ARRIVAL_STOP * self._intensity
        self._plans[process] = _Plan(rng, now if stop_now else now + self._gap(rng), self._window(rng))
        if rng.random() < self._intensity:
            nice = rng.randint(0, 19)
            if not first:
                self._renice(process, nice, now)

    def _gap(self, rng: random.Random) -> float:
        return rng.expovariate(STOP_RATE * self._intensity)

    def _window(self, rng: random.Random) -> float:
        return math.exp(rng.uniform(math.log(MIN_WINDOW), math.log(MAX_WINDOW)))

    def _try_stop(self, process: psutil.Process, plan: _Plan, now: float) -> None:
        if len(self._stopped) >= self._max_stopped:
            return
        if self._stopped_seconds >= self._share * (now + GRACE):
            return  # overdrawn: deferred until the build has run long enough to repay it
        self._stopped_pids = self._stopped_pids | {process.pid}
        try:
            process.send_signal(signal.SIGSTOP)
        except psutil.Error:
            self._stopped_pids = self._stopped_pids - {process.pid}
            return
        self._stopped[process] = now + plan.window
        self._stopped_seconds += plan.window
        self._record(process, now, "stop", plan.window)
        plan.due = now + plan.window + self._gap(plan.rng)
        plan.window = self._window(plan.rng)

    def _resume(self, process: psutil.Process) -> None:
        until = self._stopped.pop(process)
        self._stopped_seconds += self._now() - until  # account the actual length, not the planned
        try:
            if process.is_running():  # never SIGCONT a stranger that inherited the pid
                process.send_signal(signal.SIGCONT)
        except psutil.Error:
            pass
        self._stopped_pids = self._stopped_pids - {process.pid}

    def _renice(self, process: psutil.Process, nice: int, now: float) -> None:
        try:
            if nice > process.nice():  # only ever lower a build process's priority
                process.nice(nice)
                self._record(process, now, "nice", nice)
        except psutil.Error:
            pass

    def _record(self, process: psutil.Process, now: float, action: str, value: float) -> None:
        self._events.append(JitterEvent(round(now, 6), process.pid, _command(process), action, value))


def _birth(process: psutil.Process) -> tuple[float, int]:
    """Arrival order within one poll; the pid alone would misorder after pid wrap-around."""
    try:
        return process.create_time(), process.pid
    except psutil.Error:
        return math.inf, process.pid


def _command(process: psutil.Process) -> str:
    try:
        text = " ".join(process.cmdline()) or process.name()
    except psutil.Error:
        text = "?"
    return text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 3] + "..."
