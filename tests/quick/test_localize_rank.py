"""Localization that finishes: roots ranked by what they explain, a budget that ends it,
known noise said in one line (issue 13). No builds: synthetic traces and files."""

from __future__ import annotations

import string
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fuzzer.explain as explain
from fuzzer.campaign.evidence import Evidence
from fuzzer.execute.run import RunRecord
from fuzzer.explain import budget as budget_module
from fuzzer.explain.budget import DEFAULT_BUILDS, DEFAULT_MIN_S, Budget, localization_budget
from fuzzer.explain.classify import Context, classify
from fuzzer.explain.noise import known_noise, noise_between
from fuzzer.explain.ranking import Tier, rank, tier_of
from fuzzer.model import Culprit, RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.trace.graph import find_roots
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

from conftest import buildfuzz_in_process
from test_stabilizers import Clock


LINK_ERROR = "/usr/bin/ld: /tmp/cc{}.o: in function `main':\nconftest.c:(.text+0x5): undefined reference to `{}'\n"


def config_log(names: list[str], result: str = "no") -> bytes:
    checks = [f"configure: checking for f{i}\n" + LINK_ERROR.format(n, f"f{i}") + f"configure: result: {result}\n"
              for i, n in enumerate(names)]
    return ("This file contains any messages produced by compilers.\n" + "".join(checks)).encode()


temp_names = st.lists(st.text(string.ascii_letters + string.digits, min_size=6, max_size=6), min_size=1, max_size=4)


# --- known noise -------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(temp_names, temp_names)
def test_config_logs_differing_only_in_gcc_temporaries_are_noise(a, b):
    n = min(len(a), len(b))
    found = noise_between("config.log", config_log(a[:n]), config_log(b[:n]))
    if a[:n] == b[:n]:
        assert found is None  # equal variants: nothing to explain
    else:
        assert found is not None and found.kinds == ("names of temporary files",)
        assert found.describe() == "names of temporary files"


@settings(max_examples=60, deadline=None)
@given(temp_names, temp_names)
def test_a_log_that_also_differs_in_a_result_is_not_noise(a, b):
    n = min(len(a), len(b))
    assert noise_between("config.log", config_log(a[:n], "no"), config_log(b[:n], "yes")) is None


def test_pids_and_dates_are_named_with_an_example():
    found = noise_between("build.log", b"start Mon Dec  1 10:54:54 UTC 2026 pid 4242\nok\n",
                          b"start Mon Dec  1 10:55:07 UTC 2026 pid 4377\nok\n")
    assert found is not None and set(found.kinds) == {"process ids", "dates"}
    assert "pid 4242" in found.evidence() and "pid 4377" in found.evidence()
    assert noise_between("x.log", b"made 2026-12-01T10:54:54Z\n", b"made 2026-12-02T08:00:01Z\n").kinds == ("dates",)


def test_compiler_positions_and_binaries_are_not_noise():
    assert noise_between("build.log", b"x.c:12:34: error: y\n", b"x.c:12:35: error: y\n") is None
    assert noise_between("tool.cache", b"\0/tmp/ccAAAAAA.o", b"\0/tmp/ccBBBBBB.o") is None


# --- ranking -----------------------------------------------------------------------------

def lzop_like(configure_s: float = 8.0):
    """configure writes a log; help.o embeds the date; lzx links it; gen.c is slow to make."""
    steps = [
        FakeStep("./configure", 0, configure_s, writes={"config.log": 1, "config.h": 2}),
        FakeStep("python3 gen.py > gen.c", 10, 13, writes={"gen.c": 12}),
        FakeStep("gcc -c help.c -o help.o", 14, 14.2, reads={"help.c": 14.05, "config.h": 14.06}, writes={"help.o": 14.1}),
        FakeStep("gcc -o lzx help.o gen.c", 15, 16, reads={"help.o": 15.1, "gen.c": 15.2}, writes={"lzx": 15.9}),
    ]
    trace = synthetic_trace(steps)
    return find_roots(trace, trace, {"config.log", "help.o", "gen.c", "lzx"})


def by_command(roots, command):
    return next(i for i, r in enumerate(roots) if r.command == command)


def test_deliverables_first_cheapest_first_logs_and_noise_last():
    roots = lzop_like()
    order = [r.root.command for r in rank(roots, (), set())]
    assert order == ["gcc -c help.c -o help.o", "python3 gen.py > gen.c", "./configure"]
    noisy = {by_command(roots, "./configure")}
    ranked = rank(roots, (), noisy)
    assert [r.tier for r in ranked] == [Tier.DELIVERABLE, Tier.DELIVERABLE, Tier.NOISE]


def test_what_the_user_names_comes_first():
    roots = lzop_like()
    ranked = rank(roots, ("*.log",), set())
    assert ranked[0].root.command == "./configure" and ranked[0].tier == Tier.NAMED


def test_a_log_leading_into_a_deliverable_is_a_deliverables_root():
    trace = synthetic_trace([
        FakeStep("./configure", 0, 1, writes={"config.log": 0.5, "config.h": 0.6}),
        FakeStep("gcc -c a.c", 2, 3, reads={"config.h": 2.1}, writes={"a.o": 2.9}),
    ])
    (root,) = find_roots(trace, trace, {"config.log", "config.h", "a.o"})
    assert tier_of(root, (), noise=True) == Tier.DELIVERABLE


class FetchingExecutor:
    """Gives the traced reference's variant of a file, when it has one."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def fetch(self, record, path, dest) -> bool:
        if path not in self.files:
            return False
        dest.write_bytes(self.files[path])
        return True


def stored_campaign(tmp_path, reference: dict[str, bytes], blobs: dict[str, bytes]):
    """run 0's tree and the variants kept from later runs, where a campaign keeps them."""
    evidence = Evidence(tmp_path)
    for path, data in reference.items():
        evidence.reference_tree.mkdir(parents=True, exist_ok=True)
        (evidence.reference_tree / path).write_bytes(data)
    (tmp_path / "blobs").mkdir(parents=True)
    manifest = {}
    for digest, (path, data) in enumerate(blobs.items()):
        (tmp_path / "blobs" / str(digest)).write_bytes(data)
        manifest[path] = Entry("file", str(digest), size=len(data))
    later = RunRecord(1, Perturbation(4, (0,), 0.0, 0), RunStatus.OK, 0, 1.0, Manifest(manifest), "")
    return SimpleNamespace(evidence=evidence, runs=[later])


def test_noise_is_judged_on_the_variants_at_hand(tmp_path):
    roots = lzop_like()
    configure = by_command(roots, "./configure")
    first, second = config_log(["AAAAAA"]), config_log(["BBBBBB"])
    campaign = stored_campaign(tmp_path / "traced", {"config.log": first}, {})
    noise = known_noise(campaign.runs, campaign.evidence, FetchingExecutor({"config.log": second}), None, roots)
    assert list(noise) == [configure] and noise[configure].kinds == ("names of temporary files",)
    campaign = stored_campaign(tmp_path / "kept", {"config.log": first}, {"config.log": second})
    assert list(known_noise(campaign.runs, campaign.evidence, FetchingExecutor({}), None, roots)) == [configure]
    lone = stored_campaign(tmp_path / "lone", {"config.log": first}, {})
    assert known_noise(lone.runs, lone.evidence, FetchingExecutor({}), None, roots) == {}  # one variant proves nothing
    real = stored_campaign(tmp_path / "real", {"config.log": first}, {"config.log": config_log(["BBBBBB"], "yes")})
    assert known_noise(real.runs, real.evidence, FetchingExecutor({}), None, roots) == {}
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["blobs", "reference"]  # no scratch left


# --- the budget ----------------------------------------------------------------------------

def test_the_default_budget_is_three_builds_with_a_floor():
    assert localization_budget(None, float("inf"), 100.0).seconds == DEFAULT_BUILDS * 100.0
    assert localization_budget(None, float("inf"), 1.0).seconds == DEFAULT_MIN_S
    assert localization_budget(600.0, float("inf"), 1.0).seconds == 600.0
    assert localization_budget(600.0, 50.0, 1.0).origin == "what --budget left"
    assert localization_budget(None, -3.0, 1.0).seconds == 0.0  # a spent --budget: nothing starts


def test_explaining_stops_when_the_budget_is_spent_and_names_what_is_left(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(budget_module, "time", clock)
    roots = lzop_like()

    def slow_classify(root, context):
        clock.now += 40  # each explanation takes 40 s of a 60 s budget
        return Culprit(command=root.command, argv=[], cwd=".", outputs=list(root.outputs), kind="intrinsic")

    monkeypatch.setattr(explain, "classify", slow_classify)
    budget = Budget(clock.now + 60, 60, "--localize-budget")
    context = SimpleNamespace(budget=budget)
    culprits, left = explain._explain_in_budget(rank(roots, (), set()), context)
    # explained cheapest first (help.c, then gen.py), reported in the trace's order (gen.py started first)
    assert [c.command for c in culprits] == ["python3 gen.py > gen.c", "gcc -c help.c -o help.o"]
    assert [r.root.command for r in left] == ["./configure"]
    (note,) = explain._notes(roots, left, budget, ())
    assert "60 s, --localize-budget" in note and "1 root step(s) left unexplained: `./configure` (config.log" in note


def run(perturbation: Perturbation) -> RunRecord:
    return RunRecord(0, perturbation, RunStatus.OK, 0, 1.0, Manifest({"x": Entry("file", "d", size=1)}), "")


def context_for(budget: Budget, noise: dict) -> Context:
    def no_replays(candidate):
        raise AssertionError("a step too costly to replay was replayed")

    reference = run(Perturbation(1, (0, 1), 0.0, 0))
    return Context(reference, run(Perturbation(4, (0,), 0.0, 0)), no_replays, (), budget, noise)


def test_a_step_too_costly_to_replay_is_explained_from_the_traces():
    roots = lzop_like(configure_s=100.0)
    configure = roots[by_command(roots, "./configure")]
    budget = Budget(budget_module.time.monotonic() + 120, 120, "--localize-budget")
    culprit = classify(configure, context_for(budget, {}))
    assert culprit.kind == "unknown" and "explained from the traces alone" in culprit.evidence
    assert "not replayed: its first 5 replays would take about 501 s" in culprit.evidence
    noise = noise_between("config.log", config_log(["AAAAAA"]), config_log(["BBBBBB"]))
    culprit = classify(configure, context_for(budget, {configure.step.key: noise}))
    assert culprit.kind == "intrinsic" and culprit.evidence.startswith("intrinsic: names of temporary files; ")
    assert "\n" not in culprit.evidence and not culprit.stabilized_by


# --- the command line ----------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--localize-budget", "-5"], "cannot read duration '-5'"),
    (["--localize-budget", "0"], "--localize-budget must be a positive"),
    (["--stabilizers", "ASLR,NOPE"], "unknown stabiliser 'NOPE' in --stabilizers; known: PYTHONHASHSEED, ASLR"),
    (["--stabilizers", ","], "--stabilizers needs at least one name"),
])
def test_bad_localization_options_are_one_line_and_exit_2(tmp_path, args, message):
    result = buildfuzz_in_process("run", "--source", tmp_path, "--store", tmp_path / "store", *args, "--", "true")
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "store").exists()
