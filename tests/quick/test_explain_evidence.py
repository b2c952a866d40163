"""Evidence rules of `explain` that need no build: a failed run's log read against the
reference trace, one culprit per step, shared state as a race."""

from __future__ import annotations

from dataclasses import replace

from msgspec import structs

from fuzzer.explain.shared_cause import one_per_step
from fuzzer.explain.classify import _other, _shared_state
from fuzzer.explain.from_log import explain_failure
from fuzzer.model import Culprit
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.hazards import find_hazards
from fuzzer.trace.processes import Access
from fuzzer.trace.steps import build_trace
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

REFERENCE = synthetic_trace([
    FakeStep("python3 gen_parser.py parser.y", 0, 1, reads={"parser.y": 0.1},
             writes={"parser.c": 0.8, "parser.h": 0.9}),
    FakeStep("gcc -c parser.c -o parser.o", 1.1, 2, reads={"parser.c": 1.2, "parser.h": 1.3}, writes={"parser.o": 1.9}),
    FakeStep("gcc -c lexer.c -o lexer.o", 2.1, 3, reads={"lexer.c": 2.2, "parser.h": 2.3}, writes={"lexer.o": 2.9}),
])
FAILED_LOG = """gcc -c lexer.c -o lexer.o
lexer.c:2:10: fatal error: parser.h: No such file or directory
compilation terminated.
make: *** [Makefile:9: lexer.o] Error 1
"""


def test_a_failed_runs_log_names_the_reader_and_the_reference_trace_its_writer():
    finding = explain_failure(FAILED_LOG, 3, REFERENCE)
    assert finding is not None
    culprit = finding.culprit
    assert (culprit.command, culprit.kind, culprit.other_step) == (
        "gcc -c lexer.c -o lexer.o", "race", "python3 gen_parser.py parser.y")
    assert "run 3's log" in culprit.evidence and "parser.h: No such file" in culprit.evidence
    assert (finding.hazard.file, finding.hazard.writer) == ("parser.h", "python3 gen_parser.py parser.y")


def test_a_log_naming_no_generated_file_is_not_enough_evidence():
    assert explain_failure("cc1: out of memory\nmake: *** [all] Error 1\n", 1, REFERENCE) is None
    assert explain_failure("stdio.h: No such file or directory\n", 1, REFERENCE) is None


def culprit(kind: str, outputs: list[str]) -> Culprit:
    return Culprit(command="gen > x", argv=["sh", "-c", "gen > x"], cwd=".", outputs=outputs, kind=kind)


def test_a_step_found_twice_is_one_culprit_with_the_strongest_evidence():
    merged = one_per_step([culprit("unknown", []), culprit("race", ["x"]), culprit("order", ["y"])])
    assert [(c.kind, c.outputs) for c in merged] == [("race", ["x", "y"])]


def test_a_root_rewriting_a_counter_an_unordered_step_rewrites_is_a_race():
    def alloc(name: str, start: float) -> FakeStep:
        return FakeStep(f"python3 alloc_ids.py {name}", start, start + 1, reads={"ids.next": start + 0.1},
                        writes={"ids.next": start + 0.9, f"msg_{name}.h": start + 0.9})

    trace = synthetic_trace([alloc("io", 0), alloc("net", 0.5)])
    hazards = tuple(find_hazards([trace]))
    step = trace.steps[1]
    candidate = RootCandidate(step, step, ("msg_net.h",), ("msg_net.h",), (), ("msg_net.h",), False)
    found = _shared_state(candidate, hazards)
    assert found is not None and found.file == "ids.next"
    # the same steps one after the other, in one order every time: no hazard, no race claimed
    serial = synthetic_trace([alloc("io", 0), alloc("net", 2)])
    assert _shared_state(candidate, tuple(find_hazards([serial, serial]))) is None


def test_a_missing_directory_in_the_log_names_the_step_that_raced_the_mkdir():
    reference = synthetic_trace([FakeStep("mkdir -p obj", 0, 0.5),
                                 FakeStep("gcc -MM src/a.c > obj/a.d", 1, 2, writes={"obj/a.d": 1.5})])
    procs = list(reference.processes)
    mkdir = next(p for p in procs if p.argv[-1] == "mkdir -p obj")
    procs[mkdir.index] = replace(mkdir, accesses=(Access("mkdir", "obj", 0.2, 0.2),))
    log = "/bin/sh: 1: cannot create obj/a.d: Directory nonexistent\nmake: *** [Makefile:3: obj/a.o] Error 2\n"
    finding = explain_failure(log, 5, build_trace(procs, "/ws"))
    assert finding is not None
    assert (finding.culprit.command, finding.culprit.other_step) == ("gcc -MM src/a.c > obj/a.d", "mkdir -p obj")
    assert (finding.hazard.type, finding.hazard.file) == ("mkdir-race", "obj/")


def test_the_reader_is_the_target_make_reports_failing_not_the_first_reader():
    log = "lexer.l:5:10: fatal error: parser.h: No such file or directory\nmake: *** [Makefile:9: lexer.o] Error 1\n"
    finding = explain_failure(log, 2, REFERENCE)
    assert finding is not None and finding.culprit.command == "gcc -c lexer.c -o lexer.o"
    # two readers and nothing in the log to tell them apart: not enough evidence to name one
    assert explain_failure("lexer.l:5:10: fatal error: parser.h: No such file or directory\n", 2, REFERENCE) is None


def test_a_log_finding_on_a_file_the_traces_flagged_stays_one_hazard():
    from fuzzer.explain import _with_log_hazard
    from fuzzer.model import Hazard

    traced = Hazard("read-before-write", "parser.h", "cc -c lexer.c", "gen", "traced run: overlap", "overlapped",
                    ["cc -c lexer.c", "gen"])
    other = Hazard("write-write", "log.txt", "a", "b")
    finding = explain_failure(FAILED_LOG.replace("gcc -c lexer.c -o lexer.o\n", ""), 3, REFERENCE)
    merged = _with_log_hazard((traced, other), structs.replace(finding.hazard, file="parser.h"))
    assert [h.file for h in merged] == ["parser.h", "log.txt"]
    assert "traced run: overlap" in merged[0].detail and "run 3" in merged[0].detail
    assert [h.file for h in _with_log_hazard((other,), finding.hazard)] == ["log.txt", "parser.h"]


# --- writer processes: what a root step is replayed as, and how the culprit names it --------

def _configure_trace():
    from test_trace_writers import BUILD_SH, trace  # one synthetic script-driven build

    return trace(BUILD_SH)


def test_a_script_step_is_replayed_as_the_process_that_wrote_its_differing_file():
    from fuzzer.explain.writer import ReplayTargets

    t = _configure_trace()
    configure = t.steps[0]
    root = RootCandidate(configure, configure, ("autom4te.cache/requests",), ("autom4te.cache/requests",), (),
                         ("autom4te.cache/requests",), False)
    targets = ReplayTargets(t, t, jobs=2)
    target = targets.of(root)
    assert target.replays_process and abs(target.duration - 0.4) < 1e-9  # the step took 7.8 s
    call = target.call
    assert (call.argv, call.cwd, call.what) == (("perl", "m4cache.pl", "configure.ac"), ".", "process")
    assert call.compared == ("autom4te.cache/requests",) and call.restored == ("autom4te.cache/requests",)
    culprit = targets.annotate(Culprit(command=configure.command, argv=list(configure.argv), cwd=".",
                                       outputs=["autom4te.cache/requests"], kind="intrinsic", evidence="e"), root)
    assert culprit.command == "sh ./configure.sh"  # the culprit still names the step
    assert culprit.writer_process.command == "perl m4cache.pl configure.ac" and culprit.writer_process.replayed
    assert culprit.evidence.startswith("e\nwriter: `perl m4cache.pl configure.ac` (in .) wrote autom4te.cache/requests")


def test_a_writer_that_cannot_be_replayed_alone_leaves_the_step_replayed_and_says_why():
    from fuzzer.explain.writer import ReplayTargets

    t = _configure_trace()
    configure = t.steps[0]
    root = RootCandidate(configure, configure, ("config.log",), ("config.log",), (), ("config.log",), False)
    targets = ReplayTargets(t, t, jobs=2)
    assert not targets.of(root).replays_process and targets.of(root).call.argv == ("sh", "./configure.sh")
    culprit = targets.annotate(Culprit(command=configure.command, argv=[], cwd=".", outputs=["config.log"],
                                       kind="unknown", evidence="e"), root)
    assert not culprit.writer_process.replayed
    assert "read conftest.c, which `sh ./configure.sh` removed afterwards" in culprit.writer_process.not_replayable
    assert culprit.evidence.endswith("writer: the step was replayed whole: `gcc conftest.c` read conftest.c, "
                                     "which `sh ./configure.sh` removed afterwards")


def test_a_plain_make_step_gets_no_writer_process():
    from fuzzer.explain.writer import ReplayTargets

    step = REFERENCE.steps[0]
    root = RootCandidate(step, step, ("parser.c",), ("parser.c",), (), ("parser.c",), False)
    culprit = Culprit(command=step.command, argv=[], cwd=".", outputs=["parser.c"], kind="intrinsic")
    assert ReplayTargets(REFERENCE, REFERENCE, jobs=1).annotate(culprit, root) is culprit


def test_a_replayed_process_writing_outside_the_tree_leaves_nothing_there(tmp_path):
    from fuzzer.execute.guard import Guard
    from fuzzer.execute.step_replay import StepCall, StepReplayer

    tree, outside = tmp_path / "tree", tmp_path / "tmp-xyz"  # the build removed its temporary directory
    tree.mkdir()
    (tree / "kept").write_text("reference\n")
    script = f'mkdir -p {outside} && date +%N > {outside}/out.whl; echo replay > kept'
    call = StepCall(argv=("sh", "-c", script), cwd=".", env={"PATH": "/usr/bin:/bin"}, exit_code=0,
                    restored=(f"{outside}/out.whl", "kept"), compared=(f"{outside}/out.whl",), what="process")
    with Guard() as guard, StepReplayer(guard, tree, call, (0,), tmp_path / "logs") as replayer:
        outcome = replayer.replay(times=3)
    assert outcome.varies and not outcome.failed
    assert not outside.exists()  # neither the file nor its directory was there before the replays
    assert (tree / "kept").read_text() == "reference\n"
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "logs").glob("*.log")) == ["process"] * 3


def test_a_compile_missing_its_directory_raced_the_mkdir_not_a_sibling_compile():
    """Three compiles write into build/object/, which `mkdir -p` makes while they run: each
    one's other party is the mkdir, though the hazard names every compile (sorted first)."""
    compiles = [FakeStep(f"cc -c {n}.c -o build/object/{n}.o", 0.0, 0.2, writes={f"build/object/{n}.o": 0.19})
                for n in ("alpha", "beta", "gamma")]
    trace = synthetic_trace([FakeStep("mkdir -p build/object", 0.01, 0.02, mkdirs={"build/object": 0.015}),
                             *compiles])
    hazards = tuple(find_hazards([trace]))
    for step in trace.steps:
        if step.command.startswith("cc"):
            found = _shared_state(RootCandidate(step, step, (), (), (), (), True), hazards)
            assert found is not None and found.type == "mkdir-race"
            assert _other(found, step.command) == "mkdir -p build/object"


def test_a_step_that_wrote_into_the_directory_and_succeeded_did_not_race_the_mkdir():
    """A mkdir race can fail a step writing into the directory, not change what it wrote
    when it succeeded: such a root is left to its replays (fossil's `mkversion >
    bld/VERSION.h` differs by the clock)."""
    trace = synthetic_trace([FakeStep("mkdir bld", 0.01, 0.02, mkdirs={"bld": 0.015}),
                             FakeStep("bld/mkversion > bld/VERSION.h", 0.0, 0.2, writes={"bld/VERSION.h": 0.19})])
    hazards = tuple(find_hazards([trace]))
    step = next(s for s in trace.steps if s.command.startswith("bld/mkversion"))
    assert any(h.type == "mkdir-race" and step.command in h.steps for h in hazards)
    assert _shared_state(RootCandidate(step, step, (), (), (), (), False), hazards) is None
    assert _shared_state(RootCandidate(step, step, (), (), (), (), True), hazards) is not None
