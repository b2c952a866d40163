import contextlib
import locale
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import traceback
from pathlib import Path

import psutil
import pytest
from hypothesis import settings

# No per-example deadline: tests hold no timings (benches measure them), and beside other
# pytest-xdist workers' builds one example took 383 ms against the default 200 ms
settings.register_profile("buildfuzz", deadline=None)
settings.load_profile("buildfuzz")

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


COSTLIEST_FIRST = ("realbuild", "slow", "quick")


def pytest_collection_modifyitems(items):
    """The directory is the cost group: tests/quick runs in seconds, tests/slow runs small real
    builds, tests/realbuild the bundled scenarios and package-shaped builds. The costliest
    group runs first, so under pytest-xdist the long builds start at once and the quick
    tests fill the workers' gaps at the end instead of a scenario finishing alone."""
    for item in items:
        group = item.path.parent.name
        if group in ("slow", "realbuild"):
            item.add_marker(pytest.mark.slow)
        if group == "realbuild":
            item.add_marker(pytest.mark.realbuild)
    items.sort(key=lambda item: COSTLIEST_FIRST.index(item.path.parent.name)
               if item.path.parent.name in COSTLIEST_FIRST else len(COSTLIEST_FIRST))


# What `@pytest.mark.needs(...)` may name besides a tool of fuzzer.tools' registry, each
# asked the same way: None when usable here, else why not.
PATH_ONLY = ("cmake", "gcc", "dpkg-deb", "chromium", "meson")  # tools the tests run that buildfuzz does not


def _capabilities() -> dict:
    from fuzzer import hold
    from fuzzer.execute import keep
    from fuzzer.tools import Tool, all_tools, make, unshare

    found = {tool.name: tool.problem for tool in all_tools()}
    found.update({name: Tool(name, name, "a test").problem for name in PATH_ONLY})
    found.update({
        "hold": hold.problem,  # the step-hold library compiles here
        "keep": keep.problem,  # the removed-file keeping library compiles here
        "hostname": unshare.hostname_problem,  # a UTS namespace of the build's own
        "user namespace": unshare.user_problem,  # the user axis: another uid and gid for the build
        "make 4.4": make.shuffle_problem,  # the builds' GNU make is 4.4 or later (--shuffle)
        "2 cpus": lambda: None if len(os.sched_getaffinity(0)) >= 2 else "fewer than 2 CPUs here",
    })
    return found


def problem(name: str) -> str | None:
    """Why `name` (a tool or a capability above) cannot be used here; None when it can."""
    known = _capabilities()
    if name not in known:
        raise ValueError(f"needs({name!r}): not a tool or capability the tests know: {sorted(known)}")
    return known[name]()


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(*names): skip unless each tool or capability is usable here")


def pytest_runtest_setup(item):
    """`@pytest.mark.needs("strace")`: skipped with the reason the code itself would give,
    asked when the test is about to run (the probes run processes; only the tests run pay)."""
    for mark in item.iter_markers("needs"):
        for name in mark.args:
            if (reason := problem(name)) is not None:
                pytest.skip(f"needs {name}: {reason}")


@pytest.fixture(autouse=True)
def no_process_left_behind():
    """Each test ends every process it started: a build, a replay or a daemon still running
    after a test is one buildfuzz (or the test) left behind, and a later test that counts
    its own children would blame itself. A leak fails the test that made it, and is ended
    (by pid: ours) so the next test starts clean."""
    from fuzzer.tools import faketime

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    faketime.release()  # held for as long as buildfuzz runs, by design; here a test is that long
    left = _alive([p for p in psutil.Process().children(recursive=True) if not _below(p, before)])
    if left:
        named = [f"{p.pid} {_cmdline(p)}" for p in left]
        for p in left:
            with contextlib.suppress(psutil.Error):
                p.kill()
        pytest.fail(f"processes left behind: {named}")


def _below(process: psutil.Process, before: set[int]) -> bool:
    """Whether `process` is one of `before` or runs below one: a process a longer-lived
    fixture started (a Dask cluster's worker, the faketime holder a worker keeps) is that
    fixture's to end."""
    try:
        return any(p.pid in before for p in (process, *process.parents()))
    except psutil.Error:
        return True  # gone


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running after a grace of 3 s (a process ended by signal may take a moment)."""
    _, alive = psutil.wait_procs(processes, timeout=3)
    return [p for p in alive if _status(p) not in (psutil.STATUS_ZOMBIE, None)]


def _status(p: psutil.Process) -> str | None:
    try:
        return p.status()
    except psutil.Error:
        return None


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())[:200]
    except psutil.Error:
        return "?"


def buildfuzz(*args, cwd=None, timeout=300, env=None):
    """Run the real CLI in a subprocess (exit codes and stderr as a user sees them). For what
    needs a process of its own: the entry point, signals, another environment (tool probes
    and imports are cached per process)."""
    return subprocess.run(
        [sys.executable, "-m", "fuzzer", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})},
    )


def buildfuzz_in_process(*args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    """`buildfuzz()` without the interpreter's start (most of a refused command's cost): the
    same `run_cli` that `python -m fuzzer` calls, the same result. Its file descriptors 1 and 2
    are captured, so the processes it starts are heard as from a real process; what the call
    changes in this process is put back."""
    from fuzzer.cli import run_cli

    argv = [str(a) for a in args]
    with _process_state_kept(cwd), _captured() as texts, _interrupted_after(timeout) as timer:
        try:
            code = int(run_cli(argv))
        except SystemExit as e:  # a command that decides its exit code
            code = _exit_status(e.code)
        except Exception:  # what the interpreter does with an exception nobody caught
            traceback.print_exc()
            code = 1
    if timer.fired:
        raise subprocess.TimeoutExpired(argv, timeout, *texts)
    return subprocess.CompletedProcess([sys.executable, "-m", "fuzzer", *argv], code, *texts)


def _exit_status(code) -> int:
    if code is None or isinstance(code, int):
        return (code or 0) % 256
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _process_state_kept(cwd):
    """The cwd, environment, umask, signal handlers and loggers, as a fresh process starts
    with them: put back after the call, so no call reaches the next one."""
    here, environ, umask = os.getcwd(), dict(os.environ), os.umask(0o022)
    os.umask(umask)
    handlers = {s: signal.getsignal(s) for s in signal.valid_signals()}
    loggers = [logging.getLogger(), *(v for v in logging.Logger.manager.loggerDict.values()
                                      if isinstance(v, logging.Logger))]
    logger_state = [(lg, lg.level, list(lg.handlers), lg.disabled, lg.propagate) for lg in loggers]
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        if os.environ != environ:
            os.environ.clear()
            os.environ.update(environ)
        os.umask(umask)
        for number, handler in handlers.items():
            if handler is not None and signal.getsignal(number) is not handler:
                signal.signal(number, handler)
        for lg, level, kept, disabled, propagate in logger_state:
            lg.level, lg.handlers[:], lg.disabled, lg.propagate = level, kept, disabled, propagate


@contextlib.contextmanager
def _captured():
    """Descriptors 1 and 2, and sys.stdout and sys.stderr over them, into memory files: what
    the call and the processes it starts write, as subprocess.run's pipes would get it."""
    streams = sys.stdout, sys.stderr
    for stream in streams:
        stream.flush()
    memories = [os.memfd_create(f"buildfuzz-fd{fd}") for fd in (1, 2)]
    kept = [os.dup(fd) for fd in (1, 2)]
    for fd, memory in zip((1, 2), memories):
        os.dup2(memory, fd)
    # as the interpreter opens them on a pipe: stdout block-buffered, stderr by the line
    sys.stdout = open(1, "w", encoding=sys.__stdout__.encoding, errors=sys.__stdout__.errors, closefd=False)
    sys.stderr = open(2, "w", encoding=sys.__stderr__.encoding, errors=sys.__stderr__.errors, closefd=False,
                      buffering=1)
    texts = ["", ""]
    try:
        yield texts
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = streams
        for index, (fd, memory, old) in enumerate(zip((1, 2), memories, kept)):
            os.dup2(old, fd)
            os.close(old)
            with open(memory, "rb") as written:
                written.seek(0)
                texts[index] = _as_text(written.read())


def _as_text(data: bytes) -> str:
    """As subprocess.run(text=True) decodes: the locale's encoding, strictly, newlines made \\n."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def _interrupted_after(timeout: float):
    """As a Ctrl-C after `timeout` seconds: the CLI's own way to stop, instead of a hung test."""
    main = threading.get_ident()

    def interrupt():
        timer.fired = True
        signal.pthread_kill(main, signal.SIGINT)

    timer = threading.Timer(timeout, interrupt)
    timer.fired = False
    timer.start()
    try:
        yield timer
    finally:
        timer.cancel()
        timer.join()


def make_project(root: Path, makefile: str, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Makefile").write_text(textwrap.dedent(makefile).replace("    ", "\t"))
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    return root


@pytest.fixture
def nproc_project(tmp_path):
    """Output that follows the CPU count: unreproducible on any machine with 2+ CPUs."""
    return make_project(tmp_path / "src", """
        all: out.txt
        out.txt:
            echo cpus=$$(nproc) > $@
        """)


@pytest.fixture
def clean_project(tmp_path):
    return make_project(tmp_path / "src", """
        all: c.txt
        a.txt:
            echo a > $@
        b.txt:
            echo b > $@
        c.txt: a.txt b.txt
            cat a.txt b.txt > $@
        """)
