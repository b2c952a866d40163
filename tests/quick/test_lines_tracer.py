"""The line tracer, loaded the way a replay loads it (PYTHONPATH + sitecustomize), on tiny
programs run twice: where the two runs part and why; on 3.12+ (sys.monitoring) too when
such an interpreter is installed. And which processes can be traced at all."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fuzzer.explain.lines import streams
from fuzzer.explain.lines.causes import cause_of, located
from fuzzer.explain.lines.program import Program, program
from fuzzer.explain.lines.replays import INJECTED
from fuzzer.model import LineCause, LineStatus


def _newer_pythons() -> list[str]:
    """One 3.12+ interpreter that runs (a pyenv shim of a version not selected does not)."""
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")))
    found += [shutil.which(f"python3.{minor}") for minor in range(12, 16)]
    runs = (p for p in dict.fromkeys(found) if p and subprocess.run([p, "-c", ""], capture_output=True).returncode == 0)
    first = next(runs, None)
    return [first] if first else []


INTERPRETERS = [sys.executable, *_newer_pythons()]


def traced(tmp_path: Path, interpreter: str, script: str, name: str, **env) -> streams.Stream:
    (tmp_path / "prog.py").write_text(script)
    out = tmp_path / f"{name}.json"
    environment = {**os.environ, "PYTHONPATH": str(INJECTED), "BUILDFUZZ_LINES_OUT": str(out), **env}
    subprocess.run([interpreter, str(tmp_path / "prog.py")], env=environment, check=True, cwd=tmp_path,
                   capture_output=True)
    return streams.read(out)


def parted(tmp_path, interpreter, script, first_env, second_env):
    a = traced(tmp_path, interpreter, script, "a", **first_env)
    b = traced(tmp_path, interpreter, script, "b", **second_env)
    found = streams.parting(a, b)
    assert found is not None and found.cause is not None
    return a, located(a, b, found, ["1", "2"], 10.0)


SET_OF_STR = """\
def collect():
    return {"cd", "echo", "exit", "export", "history", "jobs", "kill", "pwd", "read", "set"}


def table(names):
    out = []
    for name in names:
        out.append(name)
    return out


def emit(rows):
    for row in rows:
        if row.startswith("e"):
            print("short", row)
        else:
            print("long", row)


emit(table(collect()))
"""


@pytest.mark.parametrize("interpreter", INTERPRETERS)
def test_a_set_of_strings_under_two_hash_seeds_parts_at_its_iteration(tmp_path, interpreter):
    a, line = parted(tmp_path, interpreter, SET_OF_STR, {"PYTHONHASHSEED": "1"}, {"PYTHONHASHSEED": "2"})
    assert (line.status, Path(line.file).name, line.line, line.function) == (LineStatus.FOUND, "prog.py", 7, "table")
    assert (line.cause, line.expression, line.container, line.elements, line.hashed_by) == (
        LineCause.SET_OF_STR, "names", "set", ["str"], "str")
    assert line.differed and line.values[0] != line.values[1]
    assert a.mode == ("sys.monitoring" if "3.1" in a.python and int(a.python.split(".")[1]) >= 12 else "settrace")


OBJECTS = """\
class Label:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return hash(self.n) ^ id(self)


labels = set()
for n in range(40):
    labels.add(Label(n))
for k, label in enumerate(labels):
    label.k = k
print(sorted((l.n, l.k) for l in labels))
"""


@pytest.mark.parametrize("interpreter", INTERPRETERS)
def test_objects_hashed_by_id_are_named_by_creation_and_class_by_address(tmp_path, interpreter):
    seen = set()
    for attempt in range(8):  # two runs iterate alike about one time in five here
        a = traced(tmp_path, interpreter, OBJECTS, f"a{attempt}")
        b = traced(tmp_path, interpreter, OBJECTS, f"b{attempt}")
        found = streams.parting(a, b)
        if found is not None:
            break
    assert found is not None, "8 pairs of runs iterated 40 address-hashed objects alike"
    line = located(a, b, found, ["1", "2"], 10.0)
    assert (line.line, line.cause, line.elements, line.hashed_by) == (12, LineCause.SET_BY_ADDRESS,
                                                                       ["__main__.Label"], "address+own")
    seen.update(line.values)
    assert all(value.startswith("(") and "<Label#" in value and "0x" not in value for value in seen)


def test_a_uuid_and_a_directory_listing_are_the_calls_that_made_the_values(tmp_path):
    script = "import uuid\n\ndef ident():\n    return uuid.uuid4()\n\nprint(ident())\n"
    _, line = parted(tmp_path, sys.executable, script, {}, {})
    assert (line.line, line.function, line.cause, line.expression) == (4, "ident", LineCause.UUID, "uuid.uuid4()")
    # tmpfs lists in creation order (newest first); ext4 by a hash of the names, the same whatever the order
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    listing = Path(tempfile.mkdtemp(prefix="lines-listed-", dir=shm))
    try:
        script = f"import os\n\nfor name in os.listdir({str(listing)!r}):\n    print(name)\n"
        streams_seen = []
        for names in (["a", "b", "c", "d"], ["d", "c", "b", "a"]):
            for child in listing.iterdir():
                child.unlink()
            for name in names:
                (listing / name).touch()
            streams_seen.append(traced(tmp_path, sys.executable, script, names[0]))
    finally:
        shutil.rmtree(listing)
    a, b = streams_seen
    found = streams.parting(a, b)
    if found is None:
        pytest.skip("no filesystem here lists a directory in an order that follows creation")
    assert cause_of(a.events[found.cause]) == LineCause.DIRECTORY_ORDER


def test_the_cap_stops_tracing_and_says_so_and_the_program_is_untouched(tmp_path):
    marker = tmp_path / "user-site"
    marker.mkdir()
    (marker / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = '1'\n")
    script = ("import os\nfor i in range(100):\n    pass\n"
              "print(os.environ.get('USER_SITE_RAN'), 'BUILDFUZZ_LINES_OUT' in os.environ)\n")
    (tmp_path / "prog.py").write_text(script)
    out = tmp_path / "capped.json"
    env = {**os.environ, "PYTHONPATH": f"{INJECTED}{os.pathsep}{marker}", "BUILDFUZZ_LINES_OUT": str(out),
           "BUILDFUZZ_LINES_MAX_EVENTS": "50"}
    ran = subprocess.run([sys.executable, str(tmp_path / "prog.py")], env=env, capture_output=True, text=True,
                         check=True)
    assert ran.stdout.split() == ["1", "False"]  # the user's sitecustomize ran; children are not traced
    stream = streams.read(out)
    assert len(stream.events) == 50 and "cap of 50" in stream.stopped


def test_only_python_without_isolating_flags_is_traced(tmp_path):
    perl = tmp_path / "m4cache.pl"
    perl.write_text("#!/usr/bin/perl -w\nprint 1;\n")
    shebang = tmp_path / "gen"
    shebang.write_text("#!/usr/bin/env python3 -S\nprint(1)\n")
    here = str(tmp_path)
    assert program(("python3", "gen.py", "-o", "x"), here, {}).language == "python"
    assert program(("python3", "gen.py"), here, {}).problem == ""
    assert program(("/usr/bin/python3.11", "-X", "dev", "-m", "peachc"), here, {}).path == "peachc"
    assert "-I" in program(("python3", "-I", "gen.py"), here, {}).problem
    assert "-E" in program(("python3", "-Es", "gen.py"), here, {}).problem
    assert "-S" in program(("./gen",), here, {}).problem
    assert program(("/usr/bin/perl", "-w", "m4cache.pl"), here, {}) == Program("perl", "m4cache.pl")
    assert program(("./m4cache.pl",), here, {}).language == "perl"
    assert program((shutil.which("true") or "/bin/true",), here, {}).language == "compiled"


def test_the_time_budget_stops_tracing_and_says_so(tmp_path):
    stream = traced(tmp_path, sys.executable, "for i in range(5000):\n    pass\n", "timed",
                    BUILDFUZZ_LINES_BUDGET_S="0")
    assert stream.stopped == "reached its time budget" and len(stream.events) == 1024


@pytest.mark.parametrize("interpreter", INTERPRETERS)
@pytest.mark.parametrize("comprehension", ["list(n.upper() for n in names)", "[n.upper() for n in names]"])
def test_a_comprehension_over_a_set_is_where_the_values_part(tmp_path, interpreter, comprehension):
    # 3.12 inlines a list comprehension in its function's frame (PEP 709); a generator expression keeps its own
    script = ("def upper(names):\n    return " + comprehension + "\n\n\n"
              "print(upper({'cd', 'echo', 'exit', 'jobs', 'kill', 'pwd', 'read', 'set'}))\n")
    _, line = parted(tmp_path, interpreter, script, {"PYTHONHASHSEED": "1"}, {"PYTHONHASHSEED": "2"})
    assert (line.line, line.function.split(".")[0], line.cause, line.expression) == (
        2, "upper", LineCause.SET_OF_STR, "names")
    assert line.differed and line.container == "set" and line.element >= 1


def test_an_interpreter_older_than_3_8_runs_as_ever_and_its_stream_says_why_it_is_empty(tmp_path):
    old = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[67].*/bin/python3")))
    if not old:
        pytest.skip("no Python older than 3.8 installed")
    stream = traced(tmp_path, old[0], SET_OF_STR, "old")  # check=True: the program itself still succeeds
    assert (stream.stopped, stream.events) == ("needs Python 3.8 or later", [])


def test_objects_whose_repr_says_nothing_apart_are_told_apart_by_creation(tmp_path):
    """PeachPy's unnamed Name: every one reprs as `<?>`; without its ordinal two runs that
    numbered them in different orders would read alike everywhere."""
    script = OBJECTS.replace("        self.n = n\n", "        self.n = n\n\n    def __repr__(self):\n"
                                                    "        return '<?>'\n")
    for attempt in range(8):
        a = traced(tmp_path, sys.executable, script, f"a{attempt}")
        b = traced(tmp_path, sys.executable, script, f"b{attempt}")
        found = streams.parting(a, b)
        if found is not None:
            break
    assert found is not None, "8 pairs of runs iterated 40 address-hashed objects alike"
    line = located(a, b, found, ["1", "2"], 10.0)
    assert (line.line, line.cause, line.differed) == (15, LineCause.SET_BY_ADDRESS, True)
    assert all(re.fullmatch(r"\(\d+, Label#\d+ <\?>\)", value) for value in line.values), line.values
