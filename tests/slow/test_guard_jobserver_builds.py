"""A build the guard kills leaves nothing in the build's temporary directory: GNU make 4.4's
jobserver is a named pipe there (GMfifoPID), which make removes only when it exits itself."""

import os
import time

import pytest

from fuzzer.execute.guard import Guard
from fuzzer.tools import make

MAKE = make.for_builds()


@pytest.mark.needs("make 4.4")  # its jobserver is a named pipe
def test_a_killed_make_leaves_no_jobserver_pipe(tmp_path):
    (tmp_path / "Makefile").write_text("all: a b\na b:\n\tsleep 30\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp)}
    with Guard() as guard:
        guard.start([MAKE.path, "-j2"], cwd=str(tmp_path), env=env, cpus=None, log_path=str(tmp_path / "log"))
        deadline = time.monotonic() + 10
        while not any(tmp.glob("GMfifo*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(tmp.glob("GMfifo*")), "make -j2 made no jobserver pipe: nothing to test"
        guard.kill()
    assert list(tmp.iterdir()) == []
