"""Hostile input and faults: every bad command line or scenario file gets one line and
exit 2 before anything is built or created; no input ends in a traceback; a signal at
any phase gives "no verdict" (exit 4), never a green, and leaves no process behind.

The table and fuzz tests run the real command line in-process (`cli.run_cli`, through
`conftest.buildfuzz_in_process`): the validation they exercise happens before any build,
and whatever gets past it builds `true`, so they stay in the quick subset.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import buildfuzz_in_process


SRC, STORE, OUT = "{src}", "{store}", "{out}"  # placeholders, filled per sandbox


LONG = "x" * 100_000


NOT_UTF8 = os.fsdecode(b"bad-\xff")  # how a non-UTF-8 argv word reaches Python


RUN = ["run", "--source", SRC, "--store", STORE]


REPLAY = ["replay", "--store", STORE]


BAD_COMMAND_LINES = {
    "runs-huge": [*RUN, "--runs", "100000000000000000000", "--", "true"],
    "runs-zero": [*RUN, "--runs", "0", "--", "true"],
    "runs-one-cannot-compare": [*RUN, "--runs", "1", "--", "true"],
    "runs-negative": [*RUN, "--runs", "-3", "--", "true"],
    "runs-word": [*RUN, "--runs", "abc", "--", "true"],
    "runs-fraction": [*RUN, "--runs", "2.5", "--", "true"],
    "runs-thousands-of-digits": [*RUN, "--runs", "9" * 5000, "--", "true"],
    "seed-huge": [*RUN, "--seed", "100000000000000000000", "--", "true"],
    "seed-negative": [*RUN, "--seed", "-1", "--", "true"],
    "seed-word": [*RUN, "--seed", "x", "--", "true"],
    "timeout-inf": [*RUN, "--timeout", "inf", "--", "true"],
    "timeout-nan": [*RUN, "--timeout", "nan", "--", "true"],
    "timeout-zero": [*RUN, "--timeout", "0", "--", "true"],
    "timeout-negative": [*RUN, "--timeout", "-5", "--", "true"],
    "timeout-overflow": [*RUN, "--timeout", "1e999", "--", "true"],
    "timeout-missing-value": [*RUN, "--timeout", "--", "true"],
    "diff-timeout-negative": [*RUN, "--diff-timeout", "-1", "--", "true"],
    "diff-timeout-nan": [*RUN, "--diff-timeout", "nan", "--", "true"],
    "diff-timeout-zero": [*RUN, "--diff-timeout", "0", "--", "true"],
    "budget-zero": [*RUN, "--budget", "0s", "--", "true"],
    "budget-infinite": [*RUN, "--budget", "9" * 400, "--", "true"],
    "budget-empty": [*RUN, "--budget", "", "--", "true"],
    "budget-words": [*RUN, "--budget", "8 hours", "--", "true"],
    "budget-negative": [*RUN, "--budget", "-1h", "--", "true"],
    "jobs-hundred-thousand": [*RUN, "--jobs", "1-100000", "--", "true"],
    "jobs-from-zero": [*RUN, "--jobs", "0-4", "--", "true"],
    "jobs-reversed": [*RUN, "--jobs", "8-2", "--", "true"],
    "jobs-word": [*RUN, "--jobs", "many", "--", "true"],
    "jobs-empty": [*RUN, "--jobs", "", "--", "true"],
    "jobs-open-range": [*RUN, "--jobs", "1-", "--", "true"],
    "jobs-thousands-of-digits": [*RUN, "--jobs", "1-" + "9" * 5000, "--", "true"],
    "axes-comma": [*RUN, "--axes", ",", "--", "true"],
    "axes-empty": [*RUN, "--axes", "", "--", "true"],
    "axes-unknown": [*RUN, "--axes", "jobs,moon", "--", "true"],
    "axes-none-left": [*RUN, "--axes", "jitter", "--no-jitter", "--", "true"],
    "store-empty": ["run", "--source", SRC, "--store", "", "--", "true"],
    "store-too-long": ["run", "--source", SRC, "--store", "y" * 5000, "--", "true"],
    "store-name-too-long": ["run", "--source", SRC, "--store", "y" * 300, "--", "true"],
    "source-empty": ["run", "--source", "", "--store", STORE, "--", "true"],
    "source-100k-chars": ["run", "--source", LONG, "--store", STORE, "--", "true"],
    "source-missing": ["run", "--source", SRC + "/nope", "--store", STORE, "--", "true"],
    "source-is-a-file": ["run", "--source", SRC + "/Makefile", "--store", STORE, "--", "true"],
    "source-control-characters": ["run", "--source", "a\nb\x1b]0;pwned\x07", "--store", STORE, "--", "true"],
    "command-not-utf8": [*RUN, "--", "echo", NOT_UTF8],
    "command-one-word-not-utf8": [*RUN, "--", NOT_UTF8],
    "artifact-not-utf8": [*RUN, "--artifact", NOT_UTF8, "--", "true"],
    "artifact-empty": [*RUN, "--artifact", "", "--", "true"],
    "ignore-empty": [*RUN, "--ignore", "", "--", "true"],
    "typo-run-for-runs": [*RUN, "--run", "3", "--", "true"],
    "unknown-option": [*RUN, "--bogus", "--", "true"],
    "unknown-option-after-command": [*RUN, "make", "--bogus"],
    "build-option-without-dashdash": [*RUN, "make", "-j4"],
    "no-command": RUN,
    "blank-command": [*RUN, "--", "  "],
    "flag-with-value": [*RUN, "--quiet=3", "--", "true"],
    "report-json-is-a-directory": [*RUN, "--report-json", SRC, "--", "true"],
    "html-in-proc": [*RUN, "--html", "/proc/x.html", "--", "true"],
    "report-json-dev-null": [*RUN, "--report-json", "/dev/null", "--", "true"],
    "junit-missing-directory": [*RUN, "--junit", OUT + "/nodir/r.xml", "--", "true"],
    "markdown-name-too-long": [*RUN, "--markdown", OUT + "/" + "n" * 300 + ".md", "--", "true"],
    "html-empty": [*RUN, "--html", "", "--", "true"],
    "in-place-without-clean": [*RUN, "--in-place", "--", "true"],
    "clean-without-in-place": [*RUN, "--clean", "rm -f x", "--", "true"],
    "resume-without-store": [*RUN, "--resume", "--", "true"],
    "replay-cpu-99": [*REPLAY, "--jobs", "1", "--cpus", "99"],
    "replay-jitter-negative": [*REPLAY, "--jobs", "2", "--jitter", "-5"],
    "replay-jitter-nan": [*REPLAY, "--jobs", "2", "--jitter", "nan"],
    "replay-jitter-above-one": [*REPLAY, "--jobs", "2", "--jitter", "2"],
    "replay-jobs-zero": [*REPLAY, "--jobs", "0"],
    "replay-jobs-hundred-thousand": [*REPLAY, "--jobs", "100000"],
    "replay-cpus-empty": [*REPLAY, "--jobs", "1", "--cpus", ""],
    "replay-cpus-reversed": [*REPLAY, "--jobs", "1", "--cpus", "3-1"],
    "replay-cpus-word": [*REPLAY, "--jobs", "1", "--cpus", "a"],
    "replay-cpus-huge-range": [*REPLAY, "--jobs", "1", "--cpus", "0-99999999999"],
    "replay-jitter-seed-negative": [*REPLAY, "--jobs", "1", "--jitter", "0.5", "--jitter-seed", "-1"],
    "replay-run-negative": [*REPLAY, "--run", "-1"],
    "replay-run-and-jobs": [*REPLAY, "--run", "1", "--jobs", "2"],
    "replay-neither-run-nor-jobs": REPLAY,
    "replay-cpus-with-run": [*REPLAY, "--run", "0", "--cpus", "0"],
    "replay-campaign-huge": [*REPLAY, "--campaign", "100000000000000000000", "--run", "0"],
    "replay-campaign-negative": [*REPLAY, "--campaign", "-1", "--run", "0"],
    "replay-store-empty": ["replay", "--store", "", "--run", "0"],
    "explain-campaign-word": ["explain", "--store", STORE, "--campaign", "x"],
    "explain-report-is-a-directory": ["explain", "--store", STORE, "--report-json", SRC],
    "scenarios-no-directory": ["scenarios", "check"],
    "scenarios-empty-directory-name": ["scenarios", "check", ""],
    "scenarios-missing-directory": ["scenarios", "check", SRC + "/nope"],
    "scenarios-without-scenario": ["scenarios", "check", SRC],
    "scenarios-100k-chars": ["scenarios", "check", LONG],
    "scenarios-runs-one": ["scenarios", "check", "--runs", "1", SRC],
    "scenarios-seed-negative": ["scenarios", "check", "--seed", "-1", SRC],
    "scenarios-report-is-a-directory": ["scenarios", "check", "--report-json", SRC, SRC],
    "unknown-command": ["frobnicate"],
}


GOOD_EXPECT = '[expect]\nverdict = "reproducible"\n'


GOOD_TOP = 'command = "true"\n'


BAD_SCENARIO_FILES = {
    "command-number": (b'command = 5\n' + GOOD_EXPECT.encode(), "command"),
    "command-empty": (b'command = ""\n' + GOOD_EXPECT.encode(), "command"),
    "command-list": (b'command = ["make"]\n' + GOOD_EXPECT.encode(), "command"),
    "description-number": (b'description = 5\n' + (GOOD_TOP + GOOD_EXPECT).encode(), "description"),
    "not-utf8": (b'command = "caf\xe9"\n' + GOOD_EXPECT.encode(), "UTF-8"),
    "not-toml": (b"this is not toml\n", "TOML"),
    "empty-file": (b"", "command"),
    "unknown-top-key": (b'colour = "red"\n' + (GOOD_TOP + GOOD_EXPECT).encode(), "colour"),
    "runs-at-top-level": (b'runs = 3\n' + (GOOD_TOP + GOOD_EXPECT).encode(), "runs"),
    "missing-expect": (GOOD_TOP.encode(), "expect"),
    "expect-not-a-table": (b'expect = 5\n' + GOOD_TOP.encode(), "expect"),
    "missing-verdict": ((GOOD_TOP + "[expect]\nkind = 'race'\n").encode(), "verdict"),
    "verdict-maybe": ((GOOD_TOP + "[expect]\nverdict = 'maybe'\n").encode(), "verdict"),
    "verdict-date": ((GOOD_TOP + "[expect]\nverdict = 1979-05-27\n").encode(), "verdict"),
    "unknown-expect-key": ((GOOD_TOP + GOOD_EXPECT + "frobnicate = 1\n").encode(), "frobnicate"),
    "artifacts-string": ((GOOD_TOP + GOOD_EXPECT + 'artifacts = "bin/x"\n').encode(), "artifacts"),
    "artifacts-numbers": ((GOOD_TOP + GOOD_EXPECT + "artifacts = [1, 2]\n").encode(), "artifacts"),
    "kind-cosmic": ((GOOD_TOP + GOOD_EXPECT + "kind = 'cosmic'\n").encode(), "kind"),
    "axis-moon": ((GOOD_TOP + GOOD_EXPECT + "axis = 'moon'\n").encode(), "axis"),
    "stabilized-by-empty-list": ((GOOD_TOP + GOOD_EXPECT + "stabilized_by = []\n").encode(), "stabilized_by"),
    "stabilized-by-number": ((GOOD_TOP + GOOD_EXPECT + "stabilized_by = 5\n").encode(), "stabilized_by"),
    "hazards-negative": ((GOOD_TOP + GOOD_EXPECT + "hazards = -1\n").encode(), "hazards"),
    "hazards-boolean": ((GOOD_TOP + GOOD_EXPECT + "hazards = true\n").encode(), "hazards"),
    "failures-string": ((GOOD_TOP + GOOD_EXPECT + "failures = 'yes'\n").encode(), "failures"),
    "run-not-a-table": ((GOOD_TOP + "run = 3\n" + GOOD_EXPECT).encode(), "run"),
    "runs-word": ((GOOD_TOP + GOOD_EXPECT + "[run]\nruns = 'abc'\n").encode(), "runs"),
    "runs-negative": ((GOOD_TOP + GOOD_EXPECT + "[run]\nruns = -3\n").encode(), "runs"),
    "runs-one": ((GOOD_TOP + GOOD_EXPECT + "[run]\nruns = 1\n").encode(), "runs"),
    "runs-float": ((GOOD_TOP + GOOD_EXPECT + "[run]\nruns = 3.0\n").encode(), "runs"),
    "runs-boolean": ((GOOD_TOP + GOOD_EXPECT + "[run]\nruns = true\n").encode(), "runs"),
    "runs-beyond-64-bits": ((GOOD_TOP + GOOD_EXPECT + "[run]\nruns = 99999999999999999999999\n").encode(), "runs"),
    "jobs-one-element": ((GOOD_TOP + GOOD_EXPECT + "[run]\njobs = [5]\n").encode(), "jobs"),
    "jobs-reversed": ((GOOD_TOP + GOOD_EXPECT + "[run]\njobs = [4, 2]\n").encode(), "jobs"),
    "jobs-hundred-thousand": ((GOOD_TOP + GOOD_EXPECT + "[run]\njobs = [1, 100000]\n").encode(), "jobs"),
    "jobs-string": ((GOOD_TOP + GOOD_EXPECT + "[run]\njobs = '1-4'\n").encode(), "jobs"),
    "ignore-numbers": ((GOOD_TOP + GOOD_EXPECT + "[run]\nignore = [1]\n").encode(), "ignore"),
    "unknown-run-key": ((GOOD_TOP + GOOD_EXPECT + "[run]\nspeed = 'fast'\n").encode(), "speed"),
}


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A source tree, a store path that must not appear, a private temp dir and cwd."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "Makefile").write_text("all:\n\ttrue\n")
    for name in ("cwd", "tmp", "out"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path


def invoke(args: list[str]) -> tuple[int, str, str]:
    """The real command line, in-process: its exit code, stdout and stderr."""
    done = buildfuzz_in_process(*args)
    return done.returncode, done.stdout, done.stderr


def fill(args: list[str], root: Path) -> list[str]:
    values = {SRC: str(root / "src"), STORE: str(root / "store"), OUT: str(root / "out")}
    return [_fill_one(a, values) for a in args]


def _fill_one(arg: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        arg = arg.replace(placeholder, value)
    return arg


def every_file(root: Path) -> set[str]:
    return {str(Path(d, name).relative_to(root)) for d, dirs, files in os.walk(root) for name in dirs + files}


def assert_one_line_usage_error(code: int, err: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("buildfuzz: error: "), err
    assert lines[0].isprintable(), "an error line must not carry control characters"


@pytest.mark.parametrize("args", BAD_COMMAND_LINES.values(), ids=BAD_COMMAND_LINES.keys())
def test_bad_command_line_is_one_line_and_exit_2(sandbox, args):
    before = every_file(sandbox)
    code, out, err = invoke(fill(args, sandbox))
    assert_one_line_usage_error(code, err)
    assert out == ""
    assert every_file(sandbox) == before, "a rejected command line left files behind"


@pytest.mark.parametrize("text, key", BAD_SCENARIO_FILES.values(), ids=BAD_SCENARIO_FILES.keys())
def test_bad_scenario_file_is_one_line_naming_file_and_key(sandbox, text, key):
    scenario = sandbox / "src" / "scenario.toml"
    scenario.write_bytes(text)
    before = every_file(sandbox)
    code, out, err = invoke(["scenarios", "check", str(sandbox / "src")])
    assert_one_line_usage_error(code, err)
    assert str(scenario) in err and key in err
    assert every_file(sandbox) == before


def test_there_are_at_least_60_bad_inputs():
    assert len(BAD_COMMAND_LINES) + len(BAD_SCENARIO_FILES) >= 60


def test_a_mistyped_option_is_never_part_of_the_build_command(sandbox):
    code, _, err = invoke(fill([*RUN, "--run", "3", "--", "true"], sandbox))
    assert code == 2 and "--runs" in err and "after --" in err


def test_the_build_command_after_dashdash_keeps_its_options(sandbox):
    report = sandbox / "out" / "r.json"
    code, _, err = invoke(fill([*RUN, "--runs", "2", "--no-localize", "--report-json", str(report), "--",
                                "sh", "-c", "echo {jobs} > /dev/null", "--bogus"], sandbox))
    assert code == 0, err
    assert json.loads(report.read_text())["command"] == "sh -c 'echo {jobs} > /dev/null' --bogus"


def test_internal_error_is_one_line_with_a_log_in_the_store(sandbox, monkeypatch):
    import fuzzer.campaign

    def crash(*args, **kwargs):
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(fuzzer.campaign, "run_campaign", crash)
    store = sandbox / "store"
    store.mkdir()
    code, _, err = invoke(fill([*RUN, "--", "true"], sandbox))
    assert code == 5
    (line,) = err.splitlines()
    assert line.startswith("buildfuzz: internal error: RuntimeError: disk on fire")
    log = Path(line.rsplit("(details in ", 1)[1].rstrip(")"))
    assert log.parent == store
    assert "Traceback" in log.read_text() and "disk on fire" in log.read_text()


def test_internal_error_without_a_store_logs_to_a_temp_file(sandbox, monkeypatch):
    import fuzzer.scenarios

    def crash(dirs):
        raise KeyError("no such thing")

    monkeypatch.setattr(fuzzer.scenarios, "find_scenarios", crash)
    code, _, err = invoke(["scenarios", "check", str(sandbox / "src")])
    assert code == 5 and "Traceback" not in err
    log = Path(err.strip().rsplit("(details in ", 1)[1].rstrip(")"))
    assert log.parent == sandbox / "tmp" and "KeyError" in log.read_text()


# --- fuzz: random argument lists and scenario files never end in a traceback --------------

# values are mostly wrong; the right ones keep any campaign that starts small (builds of `true`)
OPTION_VALUES = {
    "--runs": ["2", "3", "0", "1", "-1", "abc", "1e3", "99999999999999999999", ""],
    "--seed": ["0", "7", "-1", "x", str(2**63), ""],
    "--budget": ["1s", "30s", "0", "1e400", "1h30", "-5m", "", "9" * 400],
    "--timeout": ["30", "0", "-1", "inf", "nan", "1e999", "x"],
    "--diff-timeout": ["5", "0", "-1", "nan"],
    "--jobs": ["1-4", "2", "0", "1-100000", "8-2", "a-b", "", "-", "1--2"],
    "--axes": ["jobs", "jobs,cpus,jitter", ",", "", "moon", "jobs,,cpus"],
    "--artifact": ["*", "", "nothing-*", NOT_UTF8],
    "--ignore": ["*.log", "", NOT_UTF8],
    "--report-json": ["{out}/r.json", "{out}", "/proc/x.json", "", "{out}/no/r.json"],
    "--html": ["{out}/r.html", "/dev/null", ""],
    "--clean": ["true", ""],
    "--source": ["{src}", "", "{src}/Makefile", "{src}/nope", LONG],
    "--store": ["{store}", "", "{src}/Makefile/x"],
}


FLAGS = ["--no-jitter", "--no-affinity", "--stop-on-first", "--quiet", "--in-place", "--resume", "--no-default-ignore"]


GARBAGE = ["--bogus", "--run", "-j4", "--", "{jobs}", "make", NOT_UTF8]


REPLAY_VALUES = {
    "--run": ["0", "1", "-1", "x", "99999999999999999999"],
    "--jobs": ["0", "1", "3", "100000", "x"],
    "--cpus": ["0", "0-1", "99", "", "3-1", "a", "0-99999999999"],
    "--jitter": ["0", "0.5", "-5", "nan", "inf", "2"],
    "--jitter-seed": ["0", "-1", "99999999999999999999"],
    "--campaign": ["1", "0", "-1", "99999999999999999999"],
    "--store": ["{store}", ""],
}


def _option_words(values: dict[str, list[str]]):
    pair = st.sampled_from(sorted(values)).flatmap(lambda name: st.tuples(st.just(name), st.sampled_from(values[name])))
    return pair.map(list)


def _arguments(values: dict[str, list[str]], flags: list[str]):
    """Options with (mostly wrong) values and flags, then now and then a stray word."""
    word = st.one_of(_option_words(values), st.sampled_from(flags).map(lambda f: [f]))
    stray = st.one_of(st.sampled_from(GARBAGE), st.text(max_size=8))
    return st.tuples(st.lists(word, max_size=6), st.lists(stray, max_size=1)).map(
        lambda parts: [w for ws in parts[0] for w in ws] + parts[1])


def assert_no_crash(code: int, err: str) -> None:
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 1, 2, 3, 4), err
    if code == 2:
        assert_one_line_usage_error(code, err.splitlines()[-1])


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(words=_arguments(OPTION_VALUES, FLAGS), command=st.sampled_from([["--", "true"], ["--", "false"], []]))
def test_fuzzed_run_arguments_never_crash(sandbox, words, command):
    root = Path(tempfile.mkdtemp(dir=sandbox))
    for name in ("src", "out"):
        (root / name).mkdir()
    (root / "src" / "Makefile").write_text("all:\n\ttrue\n")
    args = fill(["run", "--source", SRC, "--store", STORE, "--no-localize", "--runs", "2", *words, *command], root)
    code, _, err = invoke(args)
    assert_no_crash(code, err)
    assert not list(root.rglob("*.tmp")), "a report's temporary file was left behind"


@FUZZ
@given(words=_arguments(REPLAY_VALUES, ["--trace"]))
def test_fuzzed_replay_arguments_never_crash(sandbox, words):
    root = Path(tempfile.mkdtemp(dir=sandbox))
    code, _, err = invoke(fill(["replay", *words], root))
    assert_no_crash(code, err)
    assert code != 0, "nothing was recorded, so nothing can match a recording"
    assert not (root / "store").exists(), "replay created a store"


toml_scalar = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.booleans(), st.floats(allow_nan=True), st.text(max_size=10),
)


toml_value = st.one_of(toml_scalar, st.lists(toml_scalar, max_size=3))


KEYS = {  # section → key → values a scenario author would write (anything else is drawn too)
    "": {"description": ["a build"], "command": ["true", "echo $$ > out", "exit 3"], "colour": [],
         "runs": []},
    "expect": {"verdict": ["reproducible", "unreproducible"], "artifacts": [["out"], []], "culprit": ["echo"],
               "kind": ["race", "intrinsic"], "axis": ["cpus"], "stabilized_by": ["ASLR", ["ASLR", "TZ"]],
               "hazards": [0, 3], "failures": [True], "frobnicate": []},
    "run": {"runs": [2, 3], "artifacts": [["out"]], "ignore": [["*.log"]], "jobs": [[1, 2]], "speed": []},
}


REQUIRED = {"": ["command"], "expect": ["verdict"], "run": []}


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(value), repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


@st.composite
def scenario_documents(draw) -> bytes:
    """Mostly well-formed TOML with the right keys, each value right or anything at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=60))
    lines = []
    for section, keys in KEYS.items():
        if section == "run" and not draw(st.booleans()):
            continue
        lines += [f"[{section}]"] if section else []
        optional = draw(st.lists(st.sampled_from(sorted(keys)), unique=True, max_size=3))
        for key in dict.fromkeys(REQUIRED[section] + optional):
            good = st.sampled_from(keys[key]) if keys[key] else toml_value
            lines.append(f"{key} = {_toml_value(draw(st.one_of(good, good, good, toml_value)))}")
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@FUZZ
@given(document=scenario_documents())
def test_fuzzed_scenario_files_never_crash(sandbox, document):
    root = Path(tempfile.mkdtemp(dir=sandbox))
    (root / "scenario.toml").write_bytes(document)
    code, _, err = invoke(["scenarios", "check", "--runs", "2", str(root)])
    assert_no_crash(code, err)
    assert code != 0 or b"verdict" in document
