"""Read a big trace's calls in a second process, so reading overlaps tracking.

Loading a trace is two passes in one: `parse.calls` joins each `<unfinished ...>` call to
its resumption and cuts off pid and time, then the tracker works out what each call did.
The first needs nothing from the second and is a third of a big trace's load, so for a
trace of JOIN_APART_BYTES or more a child Python runs it (`python -m fuzzer.trace.joiner
TRACE`) and hands the calls over in marshal'd batches on a pipe: the same items, made by
the same code, while this process tracks the ones it has. A small trace is read here:
starting the child costs more than it saves.
"""

from __future__ import annotations

import marshal
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from fuzzer.trace.parse import Call, Exit, trace_calls

JOIN_APART_BYTES = 32 << 20  # about 1,500 steps of a make build
BATCH = 4096  # calls a batch: big enough that marshal, not Python, does the work
HEADER = struct.Struct("<Q")  # a batch's length in bytes
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # where the child imports this same fuzzer from


def joined_calls(path: str | os.PathLike) -> Iterator[Call | Exit]:
    """`parse.trace_calls(path)`, read in a child process when the trace is big."""
    if os.path.getsize(path) < JOIN_APART_BYTES:
        yield from trace_calls(path)
        return
    # started in the package's root, whose `fuzzer` then comes first on the child's path
    child = subprocess.Popen([sys.executable, "-m", __name__, os.path.abspath(path)], cwd=PACKAGE_ROOT,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield from _received(child.stdout)
    finally:  # also when the reader stops early: the child is ours to end
        if child.poll() is None:
            child.kill()
        _, errors = child.communicate()
    if child.returncode != 0:
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        raise OSError(f"reading the trace {os.fspath(path)} failed: {last[0]}")


def _received(stream) -> Iterator[Call | Exit]:
    read = stream.read
    while header := read(HEADER.size):
        exits, items = marshal.loads(read(HEADER.unpack(header)[0]))
        for i in exits:
            items[i] = Exit._make(items[i])
        yield from items


def send(path: str, out) -> None:
    """The child's side: `trace_calls(path)` to `out`, as (exit positions, items) batches."""
    exits: list[int] = []
    items: list[tuple] = []
    for item in trace_calls(path):
        if type(item) is not tuple:  # an Exit: marshal takes plain tuples only
            exits.append(len(items))
            item = tuple(item)
        items.append(item)
        if len(items) == BATCH:
            _send_batch(out, exits, items)
            exits, items = [], []
    if items:
        _send_batch(out, exits, items)
    out.flush()


def _send_batch(out, exits: list[int], items: list[tuple]) -> None:
    data = marshal.dumps((exits, items))
    out.write(HEADER.pack(len(data)))
    out.write(data)


if __name__ == "__main__":
    send(sys.argv[1], sys.stdout.buffer)
