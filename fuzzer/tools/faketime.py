"""faketime: run a command under a frozen clock (libfaketime).

A stabiliser test's replays must differ in nothing but what it fixes. The faketime program
names its clock state after its own pid, `FAKETIME_SHARED=/faketime_sem_PID /faketime_shm_PID`,
in the environment of everything it runs: every replay got another environment, and one
of another size whenever the pid's width changed, which with ASLR off moves the addresses
a step sees. So a step's clock is fixed by preloading libfaketime directly, with the state
of one faketime process (the holder) kept for as long as buildfuzz runs: the same variables,
the same bytes, in every replay. Each process still starts its clock at FROZEN_AT (the
state holds only the counters of faketime's options that use it, none of which is given).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading

from fuzzer.tools import register

FAKETIME = register("faketime", "faketime", "freezing the clock for one step (stabiliser search)")
FROZEN_AT = "2000-01-01 00:00:00"
HOLDER_WAIT_S = 10.0
# what the holder prints: the library faketime preloads and the state it made, one a line
_HOLDER = 'printf "%s\\n%s\\n" "$LD_PRELOAD" "$FAKETIME_SHARED"; exec cat >/dev/null'
# the step's own LD_PRELOAD comes first, as faketime puts it
_PRELOAD = ('export LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$1" FAKETIME="$2" FAKETIME_SHARED="$3"; '
            'shift 3; exec "$@"')

_lock = threading.Lock()
_held: list[tuple[str, str] | None] = []  # once started: (library, state), or None when it could not be
_holders: list[subprocess.Popen[bytes]] = []  # the holder process, while it runs


def wrap(argv: list[str]) -> list[str]:
    """`argv` under a clock that starts at FROZEN_AT in each process, with the same
    environment in every replay; the faketime program's own (see above) when the holder
    could not be started."""
    held = _holder()
    if held is None:
        return [FAKETIME.require(), "-f", f"@{FROZEN_AT}", *argv]
    library, state = held
    return ["/bin/sh", "-c", _PRELOAD, "sh", library, f"@{FROZEN_AT}", state, *argv]


def _holder() -> tuple[str, str] | None:
    """The holder, started on first use: a faketime process whose child waits on a pipe
    only this process writes to, so it ends (and faketime removes the state) when this
    process does, however it ends."""
    with _lock:
        if not _held:
            _held.append(_start_holder())
        return _held[0]


def _start_holder() -> tuple[str, str] | None:
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("FAKETIME")}
    try:
        holder = subprocess.Popen([FAKETIME.require(), "-f", f"@{FROZEN_AT}", "/bin/sh", "-c", _HOLDER],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=env, start_new_session=True)  # a Ctrl-C on the terminal is not its end
    except OSError:
        return None
    assert holder.stdin is not None and holder.stdout is not None  # both are pipes
    library, state = (holder.stdout.readline().decode().strip() for _ in range(2))
    holder.stdout.close()
    _holders.append(holder)
    return (library, state) if library and len(state.split()) == 2 else None


@atexit.register
def release() -> None:
    """End the holder, if one was started; the next wrap starts another. At exit, and for
    whoever runs campaigns in one process and wants no process of ours left between them."""
    with _lock:
        for holder in _holders:
            _end(holder)
        _holders.clear()
        _held.clear()


def _end(holder: subprocess.Popen[bytes]) -> None:
    if holder.stdin is not None:  # a pipe, as _holder made it
        holder.stdin.close()
    try:
        holder.wait(HOLDER_WAIT_S)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder.wait()


def wrap_offset(offset: str, argv: list[str]) -> list[str]:
    """The clock runs, shifted by `offset` (+397d, -3650d, +12345678s)."""
    return [FAKETIME.require(), "-f", offset, *argv]


def wrap_frozen(instant: str, argv: list[str]) -> list[str]:
    """The clock stands still at `instant` ("2000-01-01 00:00:00") in every process of `argv`:
    faketime's absolute time without `@`. Files keep the kernel's times, so make still sees
    which is newer."""
    return [FAKETIME.require(), "-f", instant, *argv]
