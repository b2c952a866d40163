"""The truth set: every bundled scenario must meet every expectation, end to end."""

import re

import pytest

from fuzzer.errors import UsageError
from fuzzer.model import ArtifactFinding, Culprit, InsideSummary, MetadataStabilizer, Report
from fuzzer.scenarios import Expect, find_scenarios, load_scenario, score

from conftest import SCENARIOS, buildfuzz_in_process


BUNDLED = find_scenarios([SCENARIOS])


def test_there_are_enough_scenarios_of_every_kind():
    kinds = {s.expect.kind for s in BUNDLED}
    assert len(BUNDLED) >= 12
    assert {"intrinsic", "race", "order", "parallelism-level"} <= kinds
    assert any(s.expect.verdict == "reproducible" for s in BUNDLED)


def report(verdict="unreproducible", culprits=(), artifacts=(), failed=0, localized=True):
    from fuzzer.model import ArtifactFinding

    found = [ArtifactFinding(p, 2, [], [], [], False) for p in artifacts]
    return Report("make", verdict, [], failed, found, list(culprits), localized=localized)


def test_score_passes_and_fails_each_expectation():
    culprit = Culprit("python3 gen.py x", ["python3"], ".", ["x"], "intrinsic", stabilized_by=["ASLR"])
    expect = Expect("unreproducible", ("lib.so",), "gen.py", "intrinsic", None, "ASLR")
    good = score(expect, report(culprits=[culprit], artifacts=["lib.so", "x"]))
    assert all(c.status == "pass" for c in good)
    wrong = Culprit("cc -c x.c", ["cc"], ".", ["x.o"], "race")
    bad = {c.name: c.status for c in score(expect, report(culprits=[wrong], artifacts=["x"]))}
    assert bad == {"verdict": "pass", "artifacts": "FAIL", "culprit": "FAIL", "kind": "FAIL", "stabilized_by": "FAIL"}


def test_unlocalized_reports_are_pending_not_passing():
    expect = Expect("unreproducible", (), "gen.py", "race")
    checks = {c.name: c.status for c in score(expect, report(localized=False))}
    assert checks["culprit"] == "pending" and checks["kind"] == "pending"


def test_clean_scenario_must_name_no_culprit():
    culprit = Culprit("cc", ["cc"], ".", [], "race")
    checks = {c.name: c.status for c in score(Expect("reproducible"), report("reproducible", [culprit]))}
    assert checks["no culprit"] == "FAIL"


def test_stabilized_by_string_is_one_of_them_and_list_is_the_exact_joint_set():
    joint = Culprit("python3 gen.py", ["python3"], ".", ["x"], "intrinsic", stabilized_by=["ASLR", "PYTHONHASHSEED"])
    single = Culprit("python3 gen.py", ["python3"], ".", ["x"], "intrinsic", stabilized_by=["ASLR"])

    def status(want, culprit):
        checks = score(Expect("unreproducible", stabilized_by=want), report(culprits=[culprit]))
        return {c.name: c.status for c in checks}["stabilized_by"]

    assert status("ASLR", joint) == "pass" and status("ASLR", single) == "pass"
    assert status(("PYTHONHASHSEED", "ASLR"), joint) == "pass"
    assert status(("ASLR", "PYTHONHASHSEED"), single) == "FAIL", "a joint set is not met by a part of it"
    assert status(("ASLR",), joint) == "FAIL", "nor by a superset"
    assert status("TZ", joint) == "FAIL"


def test_hazards_expectation_is_an_upper_bound():
    from fuzzer.model import Hazard

    found = [Hazard("write-write", f"f{i}", "a", "b") for i in range(3)]

    def status(at_most, localized=True):
        checks = score(Expect("unreproducible", hazards=at_most),
                       Report("make", "unreproducible", [], 0, [], [], found, localized=localized))
        return {c.name: (c.status, c.detail) for c in checks}["hazards"]

    named = "; write-write on f0 [latent]; write-write on f1 [latent]; write-write on f2 [latent]"
    assert status(3) == ("pass", "3 hazards, at most 3" + named) and status(5)[0] == "pass"
    assert status(2) == ("FAIL", "3 hazards, at most 2" + named)
    assert status(0, localized=False)[0] == "pending", "untraced: hazards were not looked for"


def _inside(path: str, metadata_only: bool, members=(), stable=None) -> ArtifactFinding:
    inside = InsideSummary("zip", "...", metadata_only, list(members))
    tested = MetadataStabilizer("SOURCE_DATE_EPOCH", stable, 2, 2 if stable else 1, "e") if stable is not None else None
    return ArtifactFinding(path, 2, [], [], [], False, inside=inside, metadata_stabilizer=tested)


def test_member_and_metadata_expectations():
    expect = Expect("unreproducible", members=("libfoo.so",), metadata_only=("dist/x.whl",),
                    metadata_stabilized_by="SOURCE_DATE_EPOCH")
    good = [_inside("x.deb", False, ["data.tar.xz/usr/lib/libfoo.so"]), _inside("dist/x.whl", True, stable=True)]
    assert all(c.status == "pass" for c in score(expect, Report("make", "unreproducible", [], 0, good)))
    bad = [_inside("x.deb", False, ["data.tar.xz/usr/lib/libfoo.so.1"]), _inside("dist/x.whl", False, stable=False)]
    checks = {c.name: c.status for c in score(expect, Report("make", "unreproducible", [], 0, bad))}
    assert checks == {"verdict": "pass", "artifacts": "pass", "members": "FAIL", "metadata_only": "FAIL",
                      "metadata_stabilized_by": "FAIL"}


def test_a_scenario_file_with_every_key(tmp_path):
    (tmp_path / "scenario.toml").write_text(
        'description = "d"\ncommand = "make -j{jobs}"\n'
        '[expect]\nverdict = "unreproducible"\nartifacts = ["bin/x"]\nculprit = "gen.py"\nkind = "intrinsic"\n'
        'stabilized_by = ["ASLR", "PYTHONHASHSEED"]\nhazards = 0\nfailures = false\nmembers = ["libfoo.so"]\n'
        'metadata_only = ["dist/x.whl"]\nmetadata_stabilized_by = "SOURCE_DATE_EPOCH"\n'
        '[run]\nruns = 6\nartifacts = ["bin/*"]\nignore = ["*.log"]\njobs = [1, 4]\ndefault_ignore = false\n')
    scenario = load_scenario(tmp_path)
    assert scenario.expect == Expect("unreproducible", ("bin/x",), "gen.py", "intrinsic", None,
                                     ("ASLR", "PYTHONHASHSEED"), 0, False, members=("libfoo.so",),
                                     metadata_only=("dist/x.whl",), metadata_stabilized_by="SOURCE_DATE_EPOCH")
    assert (scenario.runs, scenario.artifacts, scenario.ignore, scenario.jobs) == (6, ("bin/*",), ("*.log",), (1, 4))
    assert scenario.counts_bookkeeping and not load_scenario(SCENARIOS / "clean-c").counts_bookkeeping
    assert load_scenario(SCENARIOS / "configure-tmpnames").counts_bookkeeping  # count_bookkeeping = true


@pytest.mark.parametrize("text, message", [
    ("command = 'make'\n", "missing key 'expect'"),
    ("command = 'make'\n[expect]\nverdict = 'maybe'\n", "expect.verdict must be one of reproducible, unreproducible"),
    ("command = 'make'\n[expect]\nverdict = 'unreproducible'\nkind = 'cosmic'\n", "expect.kind must be one of"),
    ("this is not toml", "not valid TOML"),
    ("command = 'make'\n[expect]\nverdict = 'reproducible'\nartifacts = 'bin/x'\n",
     "expect.artifacts must be a list of non-empty strings, e.g. [\"bin/x\"], got 'bin/x'"),
    ("command = 'make'\n[expect]\nverdict = 'reproducible'\ncolour = 1\n", "unknown key 'expect.colour'"),
    ("command = 5\n[expect]\nverdict = 'reproducible'\n", "command must be a non-empty string"),
    ("command = 'make'\n[expect]\nverdict = 'reproducible'\n[run]\nruns = -3\n",
     "run.runs must be a whole number from 2 to"),
    ('command = "make\\u0000"\n[expect]\nverdict = "reproducible"\n', "without NUL"),
])
def test_bad_scenario_files(tmp_path, text, message):
    (tmp_path / "scenario.toml").write_text(text)
    with pytest.raises(UsageError, match=re.escape(message)):
        load_scenario(tmp_path)


def test_check_command_rejects_a_directory_without_scenarios(tmp_path):
    r = buildfuzz_in_process("scenarios", "check", tmp_path)
    assert r.returncode == 2 and "holds no scenario.toml" in r.stderr


def test_expect_culprits_each_with_its_own_stabilisers_and_no_other(tmp_path):
    (tmp_path / "scenario.toml").write_text(
        'command = "make"\n[expect]\nverdict = "unreproducible"\nculprits = [\n'
        '  {culprit = "gen.py aslr", kind = "intrinsic", stabilized_by = ["ASLR"]},\n'
        '  {culprit = "gen.py joint", stabilized_by = ["ASLR", "PYTHONHASHSEED"]},\n]\n[run]\ncheck_steps = "all"\n')
    scenario = load_scenario(tmp_path)
    assert scenario.check_steps == "all" and len(scenario.expect.culprits) == 2

    def culprit(command, *stabilizers):
        return Culprit(command, [], ".", [], "intrinsic", stabilized_by=list(stabilizers))

    def status(*culprits):
        check = {c.name: c for c in score(scenario.expect, report(culprits=list(culprits)))}["culprits"]
        return check.status, check.detail

    aslr, joint = culprit("python3 gen.py aslr k1", "ASLR"), culprit("python3 gen.py joint k6", "PYTHONHASHSEED", "ASLR")
    assert status(joint, aslr) == ("pass", "2 named")
    assert status(aslr, culprit("python3 gen.py joint k6", "ASLR")) == ("FAIL", "gen.py joint: stabilized_by ['ASLR']")
    assert status(aslr) == ("FAIL", "gen.py joint: not named")
    assert status(aslr, joint, culprit("cc -c k3.c")) == ("FAIL", "unexpected culprit cc -c k3.c")


@pytest.mark.parametrize("text, message", [
    ("culprits = 'gen.py'\n", "expect.culprits must be a list of tables"),
    ("culprits = [{kind = 'intrinsic'}]\n", "missing key 'culprits.culprit'"),
    ("culprits = [{culprit = 'x', colour = 1}]\n", "unknown key 'culprits.colour'"),
])
def test_bad_expect_culprits(tmp_path, text, message):
    (tmp_path / "scenario.toml").write_text("command = 'make'\n[expect]\nverdict = 'unreproducible'\n" + text)
    with pytest.raises(UsageError, match=re.escape(message)):
        load_scenario(tmp_path)


def test_line_expectations_read_the_top_culprits_line():
    from fuzzer.model import LineCause, LineStatus, SourceLine

    found = SourceLine(LineStatus.FOUND, "/w/gen.py", 46, "Function.finalize", cause=LineCause.SET_BY_ADDRESS)
    skipped = SourceLine(LineStatus.SKIPPED, note="the line search is Python-only")
    expect = Expect("unreproducible", line="gen.py:46 in Function.finalize", line_cause="set-by-address")

    def checks(line):
        culprit = Culprit("python3 gen.py", ["python3"], ".", ["x"], "intrinsic", line=line)
        return {c.name: c.status for c in score(expect, report(culprits=[culprit]))}

    assert checks(found)["line"] == "pass" and checks(found)["line_cause"] == "pass"
    assert checks(skipped)["line"] == "FAIL" and checks(skipped)["line_cause"] == "FAIL"
    assert checks(None)["line"] == "FAIL"
    moved = SourceLine(LineStatus.FOUND, "/w/gen.py", 47, "Function.finalize", cause=LineCause.SET_OF_STR)
    assert checks(moved)["line"] == "FAIL" and checks(moved)["line_cause"] == "FAIL"
