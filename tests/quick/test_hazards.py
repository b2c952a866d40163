"""Hazards: a conflict counts only between steps shown to be unordered (an overlap in some
run, or opposite orders in two runs). Properties on synthetic traces, then real make."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.compare import Comparison, DivergentArtifact, Variant
from fuzzer.explain.manifest import mark_manifest
from fuzzer.model import Hazard as ReportHazard
from fuzzer.trace.hazards import (
    DUPLICATE,
    LISTING_RACE,
    MKDIR_RACE,
    READ_BEFORE_WRITE,
    WRITE_WRITE,
    distinct_labels,
    find_hazards,
)
from fuzzer.trace.processes import Access, Process
from fuzzer.trace.steps import build_trace
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

from test_trace_graph import pipelines, serial


FAST = settings(max_examples=60, deadline=None)


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@FAST
@given(pipelines())
def test_a_serial_pipeline_has_no_hazards(specs):
    assert find_hazards([synthetic_trace(serial(specs))]) == []


@FAST
@given(st.floats(0, 10), st.floats(0.1, 10), st.floats(0, 10), st.floats(0.1, 10))
def test_two_writers_conflict_exactly_when_they_overlap(start_a, len_a, start_b, len_b):
    a = FakeStep("echo a >> log", start_a, start_a + len_a, writes={"log": start_a})
    b = FakeStep("echo b >> log", start_b, start_b + len_b, writes={"log": start_b})
    hazards = find_hazards([synthetic_trace([a, b])])
    expected = [(WRITE_WRITE, "log")] if overlap((start_a, start_a + len_a), (start_b, start_b + len_b)) else []
    assert [(h.type, h.file) for h in hazards] == expected


@FAST
@given(st.floats(0, 10), st.floats(0.1, 10), st.floats(0, 10), st.floats(0.1, 10), st.booleans())
def test_a_reader_and_writer_conflict_exactly_when_they_overlap(w_start, w_len, r_start, r_len, probe):
    writer = FakeStep("gen > gen.h", w_start, w_start + w_len, writes={"gen.h": w_start})
    looks = {"probes": {"gen.h": (r_start, False)}} if probe else {"reads": {"gen.h": r_start}}
    reader = FakeStep("cc -c a.c", r_start, r_start + r_len, **looks)
    hazards = find_hazards([synthetic_trace([writer, reader])])
    ran_together = overlap((w_start, w_start + w_len), (r_start, r_start + r_len))
    expected = [(READ_BEFORE_WRITE, "gen.h", "gen > gen.h", "cc -c a.c")] if ran_together else []
    assert [(h.type, h.file, h.writer, h.reader) for h in hazards] == expected


def test_opposite_orders_in_two_runs_prove_a_missing_dependency():
    """-j1 put the generator first; the parallel run compiled first and never overlapped."""
    reference = synthetic_trace([FakeStep("gen > gen.h", 0, 1, writes={"gen.h": 0.5}),
                                 FakeStep("cc -c a.c", 2, 3, reads={"gen.h": 2.1})])
    parallel = synthetic_trace([FakeStep("cc -c a.c", 0, 0.2, probes={"gen.h": (0.1, False)}, exit_code=1),
                                FakeStep("gen > gen.h", 0.5, 1, writes={"gen.h": 0.7})])
    assert find_hazards([reference]) == [] and find_hazards([parallel]) == []
    (hazard,) = find_hazards([reference, parallel], ["reference", "parallel run"])
    assert (hazard.type, hazard.writer, hazard.reader) == (READ_BEFORE_WRITE, "gen > gen.h", "cc -c a.c")
    assert "opposite orders" in hazard.evidence and "reference" in hazard.evidence


def zlib_like(t0: float) -> list[FakeStep]:
    """Lines of one recipe touching one file in turn: normal build behaviour."""
    return [
        FakeStep("ar rc libz.a a.o b.o", t0, t0 + 1, probes={"libz.a": (t0 + 0.1, False)}, writes={"libz.a": t0 + 0.5}),
        FakeStep("ranlib libz.a", t0 + 1.1, t0 + 2, reads={"libz.a": t0 + 1.2}, writes={"libz.a": t0 + 1.5}),
        FakeStep("rm -f libz.so libz.so.1", t0 + 2.1, t0 + 2.2, deletes={"libz.so": t0 + 2.15}),
        FakeStep("ln -s libz.so.1.3 libz.so", t0 + 2.3, t0 + 2.4, writes={"libz.so": t0 + 2.35}),
        FakeStep("gcc -c -o objs/x.o x.c", t0 + 3, t0 + 4, writes={"objs/x.o": t0 + 3.9}),
        FakeStep("mv objs/x.o x.lo", t0 + 4.1, t0 + 4.2, reads={"objs/x.o": t0 + 4.15},
                 deletes={"objs/x.o": t0 + 4.15}, writes={"x.lo": t0 + 4.15}),
    ]


@FAST
@given(st.lists(st.floats(0, 100), min_size=1, max_size=4))
def test_multi_line_recipes_are_never_hazards(starts):
    assert find_hazards([synthetic_trace(zlib_like(t)) for t in starts]) == []


def test_a_recipe_running_twice_at_once_is_a_duplicate():
    twice = [FakeStep("python3 gen.py", 0, 1, writes={"a.h": 0.5, "a.c": 0.6}),
             FakeStep("python3 gen.py", 0.2, 1.2, writes={"a.h": 0.7, "a.c": 0.8})]
    (hazard,) = find_hazards([synthetic_trace(twice)])  # one cause: one hazard listing its files
    assert (hazard.type, hazard.file, hazard.files) == (DUPLICATE, "a.c", ["a.c", "a.h"])
    assert "ran 2 times" in hazard.detail and "writing a.c, a.h" in hazard.detail
    assert hazard.steps == ["python3 gen.py"]
    # one after the other (-j1 runs the recipe for each target in turn): not a hazard
    sequential = [FakeStep("python3 gen.py", 0, 1, writes={"a.h": 0.5}), FakeStep("python3 gen.py", 2, 3, writes={"a.h": 2.5})]
    assert find_hazards([synthetic_trace(sequential)]) == []


def test_hazards_are_grouped_by_file():
    gen = FakeStep("gen > g.h", 0, 2, writes={"g.h": 1.9})
    readers = [FakeStep(f"cc -c {n}.c", 0.5, 1, reads={"g.h": 0.6}) for n in "abc"]
    (hazard,) = find_hazards([synthetic_trace([gen, *readers])])
    assert hazard.file == "g.h" and set(hazard.steps) == {"gen > g.h", "cc -c a.c", "cc -c b.c", "cc -c c.c"}


def test_a_step_running_before_its_directory_existed_is_a_mkdir_race():
    mkdir = FakeStep("mkdir -p obj", 0.3, 0.4)
    trace = build_trace(_with_mkdir(synthetic_trace([mkdir, FakeStep("cc -c a.c -o obj/a.o", 0.1, 1, writes={"obj/a.o": 0.9})])), "/ws")
    (hazard,) = find_hazards([trace])
    assert (hazard.type, hazard.file, hazard.writer, hazard.reader) == (MKDIR_RACE, "obj/", "mkdir -p obj", "cc -c a.c -o obj/a.o")
    # a step that made sure of the directory itself depends on nobody
    own = FakeStep("mkdir -p obj && cc -c b.c -o obj/b.o", 0.1, 1, probes={"obj": (0.35, True)}, writes={"obj/b.o": 0.9})
    assert find_hazards([build_trace(_with_mkdir(synthetic_trace([mkdir, own])), "/ws")]) == []
    # started after the directory existed: ordered as far as the trace can tell
    late = FakeStep("cc -c c.c -o obj/c.o", 0.5, 1, writes={"obj/c.o": 0.9})
    assert find_hazards([build_trace(_with_mkdir(synthetic_trace([mkdir, late])), "/ws")]) == []


def _with_mkdir(trace) -> list[Process]:
    """The `mkdir -p obj` step's process gets its mkdir access (FakeStep has no mkdirs)."""
    procs = list(trace.processes)
    for i, p in enumerate(procs):
        if p.argv[-1] == "mkdir -p obj":
            procs[i] = Process(p.index, p.pid, p.parent, p.argv, p.execs, p.cwd, p.start, p.end, p.exit_code,
                               p.signal, (Access("mkdir", "obj", 0.35, 0.35),), p.ppid)
    return procs


def test_a_listing_races_only_the_files_it_then_used():
    writer = FakeStep("python3 render.py b.html", 0.0, 2.0, writes={"html/b.html": 1.9})
    lister = FakeStep("ls html | tar cf docs.tar -T -", 1.0, 1.5, lists={"html": 1.1},
                      reads={"html/b.html": 1.2}, writes={"docs.tar": 1.4})
    (hazard,) = find_hazards([synthetic_trace([writer, lister])])
    assert (hazard.type, hazard.file) == (LISTING_RACE, "html/b.html") and "listed html/" in hazard.detail
    unused = FakeStep("ls html > index.txt", 1.0, 1.5, lists={"html": 1.1}, writes={"index.txt": 1.4})
    assert find_hazards([synthetic_trace([writer, unused])]) == []
    late = FakeStep("ls html | tar cf docs.tar -T -", 2.5, 3.0, lists={"html": 2.6}, reads={"html/b.html": 2.7})
    assert find_hazards([synthetic_trace([writer, late])]) == []


def test_drivers_are_not_steps():
    """make stats and reads targets while jobs write them; that is no hazard."""
    make = ("make", "-j2")
    gen = ("sh", "-c", "gen > g")
    accesses = (Access("probe", "g", 0.5, 3.0, False), Access("read", "g", 1.0, 1.0))
    trace = build_trace(
        [
            Process(0, 1, None, make, (make,), ".", 0, 4, 0, None, accesses),
            Process(1, 2, 0, gen, (gen,), ".", 0.2, 2, 0, None, (Access("write", "g", 0.3, 0.3),)),
        ],
        "/ws",
    )
    assert find_hazards([trace]) == []


def test_a_recipe_running_twice_is_one_hazard_even_where_one_run_did_not_write_a_file():
    """A build that failed while the second run of the recipe had rewritten only op.h: the
    compile that read t.inc (written by the first run only) raced that same recipe, so its
    read-before-write is part of the one hazard, which lists every file the recipe writes."""
    first = FakeStep("sh mkopcodes.sh", 0.0, 1.0, writes={"op.h": 0.5, "t.inc": 0.6, "n.inc": 0.7})
    second = FakeStep("sh mkopcodes.sh", 0.2, 0.9, writes={"op.h": 0.8}, exit_code=1)
    reader = FakeStep("cc -c optable.c -o optable.o", 0.55, 1.5, reads={"t.inc": 0.58}, writes={"optable.o": 1.4})
    elsewhere = FakeStep("cc -c other.c", 0.1, 0.4, reads={"other.h": 0.15})
    writer = FakeStep("gen > other.h", 0.05, 0.3, writes={"other.h": 0.2})
    hazards = find_hazards([synthetic_trace([first, second, reader, elsewhere, writer])])
    assert [(h.type, h.files) for h in hazards] == [(DUPLICATE, ["op.h", "t.inc", "n.inc"]),
                                                     (READ_BEFORE_WRITE, ["other.h"])]
    assert "cc -c optable.c -o optable.o" in hazards[0].steps


def test_appends_in_another_order_are_a_hazard_even_without_neighbours_in_common():
    def appends(order):
        return synthetic_trace([FakeStep(f"echo {n}.o >> modules.order", i, i + 0.5, writes={"modules.order": i + 0.2})
                                for i, n in enumerate(order)])

    (hazard,) = find_hazards([appends("abcd"), appends("cadb")])  # no adjacent pair in common, same order
    assert (hazard.type, hazard.file) == (WRITE_WRITE, "modules.order") and "opposite orders" in hazard.evidence
    assert find_hazards([appends("abcd"), appends("abcd")]) == []


def test_three_runs_at_once_are_one_hazard_and_its_readers_join_it():
    files = ("op.h", "t.inc", "n.inc")
    runs = [FakeStep("sh mkopcodes.sh", i * 0.1, 1 + i * 0.1, writes={f: 0.5 + i * 0.1 for f in files})
            for i in range(3)]
    reader = FakeStep("cc -c main.c", 0.8, 1.5, reads={"op.h": 0.9})
    (hazard,) = find_hazards([synthetic_trace([*runs, reader])])
    assert hazard.type == DUPLICATE and hazard.files == ["n.inc", "op.h", "t.inc"]
    assert "ran 3 times" in hazard.detail and set(hazard.steps) == {"sh mkopcodes.sh", "cc -c main.c"}
    # the same recipe text in two directories is two recipes
    elsewhere = [FakeStep("sh mkopcodes.sh", i * 0.1, 1 + i * 0.1, writes={"sub/op.h": 0.5 + i * 0.1}, cwd="sub")
                 for i in range(2)]
    assert len(find_hazards([synthetic_trace([*runs, *elsewhere])])) == 2


def chain_runs(t0: float) -> list[FakeStep]:
    """One recipe for three chained targets, run once per target one after another; each
    run probes (`mv` checks the destination) and rewrites all three files."""
    files = ("symbols.h", "tokens.h", "keywords.h")
    return [FakeStep("sh gentables.sh words.def", t0 + i, t0 + i + 0.5,
                     probes={f: (t0 + i + 0.1, i > 0) for f in files},
                     writes={f: t0 + i + 0.2 for f in files}) for i in range(3)]


@FAST
@given(st.lists(st.floats(0, 100), min_size=1, max_size=3))
def test_a_recipe_run_three_times_in_a_chain_is_no_hazard(starts):
    """Each run probes what an earlier run wrote and a later one rewrites: within one trace
    that is both orders of "the recipe", but never of the same two runs of it."""
    assert find_hazards([synthetic_trace(chain_runs(t)) for t in starts]) == []


def test_opposite_orders_need_two_different_runs():
    reference = synthetic_trace([FakeStep("gen > gen.h", 0, 1, writes={"gen.h": 0.5}),
                                 FakeStep("cc -c a.c", 2, 3, reads={"gen.h": 2.1})])
    parallel = synthetic_trace([FakeStep("cc -c a.c", 0, 0.2, probes={"gen.h": (0.1, False)}),
                                FakeStep("gen > gen.h", 0.5, 1, writes={"gen.h": 0.7})])
    assert find_hazards([reference, reference], ["run 2", "run 2"]) == []
    (hazard,) = find_hazards([reference, parallel], ["run 2", "run 2"])  # two runs under one label
    assert (hazard.runs, hazard.traced) == ([], ["run 2 #1", "run 2 #2"])
    assert "run 2 #1" in hazard.evidence and "run 2 #2" in hazard.evidence


def test_distinct_labels_only_renames_repeats():
    assert distinct_labels(["ref", "x", "x"]) == ["ref", "x #1", "x #2"]


@FAST
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.floats(0, 5), st.floats(0.1, 2), st.booleans()),
                min_size=2, max_size=6), st.integers(1, 3))
def test_every_hazard_names_the_distinct_runs_it_rests_on(specs, copies):
    """Random steps appending to one log and reading it: whatever is found, its evidence
    rests on one run (an overlap) or two different runs (both orders)."""
    def trace(shift):
        return synthetic_trace([FakeStep(f"step {n}", t + shift * (i % 2), t + shift * (i % 2) + d,
                                         **({"writes": {"log": t + shift * (i % 2)}} if w else {"reads": {"log": t}}))
                                for i, (n, t, d, w) in enumerate(specs)])
    traces = [trace(shift) for shift in range(copies)]
    labels = [f"run {i}" for i in range(copies)]
    for hazard in find_hazards(traces, labels):
        assert len(hazard.traced) == len(set(hazard.traced)) and set(hazard.traced) <= set(labels)
        assert len(hazard.traced) == (1 if "same time" in hazard.evidence else 2)
        assert all(run in hazard.evidence for run in hazard.traced)
        assert hazard.runs == []  # the traces show it; no campaign run has yet


class _Declared:
    """A declared graph that orders the generator before the compile."""

    def orders(self, a, b):
        return {a.command, b.command} == {"gen > gen.h", "cc -c a.c"}


def test_steps_the_declared_graph_orders_are_never_a_hazard():
    together = synthetic_trace([FakeStep("gen > gen.h", 0, 1, writes={"gen.h": 0.9}),
                                FakeStep("cc -c a.c", 0.5, 1.5, reads={"gen.h": 0.6})])
    assert [h.type for h in find_hazards([together])] == [READ_BEFORE_WRITE]
    assert find_hazards([together], declared=_Declared()) == []


def comparison(*artifacts: tuple[str, tuple[int, ...], tuple[int, ...]], failed=()) -> Comparison:
    """(path, runs with the reference's bytes, runs with other bytes) per differing file."""
    divergent = tuple(DivergentArtifact(p, (Variant("A", "x", same), Variant("B", "y", other)), (), False)
                      for p, same, other in artifacts)
    return Comparison(0, 10, divergent, tuple(failed), {})


def duplicate() -> ReportHazard:
    return ReportHazard(DUPLICATE, "op.h", "sh gen.sh", "sh gen.sh", "ran 2 times", "not ordered: ...",
                        ["sh gen.sh"], files=["op.h", "op.inc"], traced=["traced rerun"])


def test_a_duplicate_whose_files_differ_in_some_runs_is_manifest_citing_them():
    (hazard,) = mark_manifest([duplicate()], comparison(("op.inc", (0, 1), (2, 3))), {})
    assert (hazard.status, hazard.runs, hazard.traced) == ("manifest", [2, 3], ["traced rerun"])
    assert "manifest: the conflict shows in run 2, run 3" in hazard.evidence
    # a file that differs in every rebuild (no run but the reference has its bytes) proves nothing
    assert mark_manifest([duplicate()], comparison(("op.inc", (0,), (1, 2))), {})[0].status == "latent"
    assert mark_manifest([duplicate()], comparison(("app", (0, 1), (2,))), {})[0].status == "latent"


def test_a_build_failing_in_a_step_that_reads_a_duplicated_recipes_output_makes_it_manifest():
    """A compile that read a half-rewritten op.h fails naming no file of the recipe; the
    failing target is the output of a step that read one: the recipe's hazard shows."""
    reference = synthetic_trace([FakeStep("sh gen.sh", 0, 1, writes={"op.h": 0.5, "op.inc": 0.6}),
                                 FakeStep("cc -c main.c -o main.o", 1.1, 2, reads={"op.h": 1.2}, writes={"main.o": 1.9}),
                                 FakeStep("cc -c util.c -o util.o", 1.1, 2, reads={"util.c": 1.2}, writes={"util.o": 1.9})])
    errors = {4: "main.c:5:12: error: 'OP_ADD' undeclared\nmake: *** [Makefile:9: main.o] Error 1",
              6: "util.c:3:1: error: expected ';'\nmake: *** [Makefile:12: util.o] Error 1"}
    (hazard,) = mark_manifest([duplicate()], comparison(failed=(4, 6)), errors, reference=reference)
    assert (hazard.status, hazard.runs, hazard.traced) == ("manifest", [4], ["traced rerun"])
    # without a failure among its readers it stays latent
    (hazard,) = mark_manifest([duplicate()], comparison(failed=(6,)), {6: errors[6]}, reference=reference)
    assert hazard.status == "latent"


def test_a_failure_saying_the_file_was_missing_makes_a_read_before_write_manifest():
    read = ReportHazard(READ_BEFORE_WRITE, "parser.h", "cc -c lexer.c", "mkparser.py", steps=["cc -c lexer.c"])
    errors = {4: "lexer.c:1:10: fatal error: parser.h: No such file or directory"}
    (hazard,) = mark_manifest([read], comparison(failed=(4,)), errors)
    assert (hazard.status, hazard.runs, hazard.traced) == ("manifest", [4], [])
    # named, but not as missing (an error inside it), or another file missing: still latent
    for text in ("parser.h:3:1: error: expected ';'", "fatal error: xparser.h: No such file or directory"):
        assert mark_manifest([read], comparison(failed=(4,)), {4: text})[0].status == "latent"
    confirmed = ReportHazard(READ_BEFORE_WRITE, "parser.h", "r", "w", status="confirmed")
    assert mark_manifest([confirmed], comparison(failed=(4,)), errors)[0].status == "confirmed"


def test_a_probe_of_a_file_a_sibling_creates_is_a_read_before_write_even_with_a_listing():
    """A compile lists its include directory and probes for the interface a sibling writes:
    in the reference it found it, in the parallel run the probe failed. The probe is the
    race; the listing is how the same step looked."""
    def run(order):
        writer = FakeStep("mlc lexer.ml", 0 if order else 0.0, 1.0, writes={"iface/lexer.cmi": 0.9})
        start = 1.5 if order else 0.1
        prober = FakeStep("mlc parser.ml", start, start + 1, lists={"iface": start + 0.05},
                          probes={"iface/lexer.cmi": (start + 0.1, order)}, writes={"parser.obj": start + 0.9})
        return synthetic_trace([writer, prober])
    (hazard,) = find_hazards([run(True), run(False)], ["reference", "parallel"])
    assert (hazard.type, hazard.file, hazard.writer, hazard.reader) == (
        READ_BEFORE_WRITE, "iface/lexer.cmi", "mlc lexer.ml", "mlc parser.ml")
    assert "(missing)" in hazard.detail and (hazard.runs, hazard.traced) == ([], ["parallel"])


def test_a_root_that_saw_the_hazards_file_differently_makes_it_manifest_in_the_traced_run():
    from fuzzer.trace.differences import EXISTENCE, READ_ORDER, InputDifference
    from fuzzer.trace.graph import RootCandidate

    def root(how, command="cc -c lexer.c", outputs=("lexer.o",)):
        difference = InputDifference("parser.h", how, "mkparser.py", 0.2, 0.1, "...")
        (step,) = synthetic_trace([FakeStep(command, 0, 1)]).steps
        return RootCandidate(step, step, outputs, outputs, (difference,), outputs, False)

    read = ReportHazard(READ_BEFORE_WRITE, "parser.h", "cc -c lexer.c", "mkparser.py",
                        steps=["cc -c lexer.c", "mkparser.py"], traced=["traced rerun"])
    shown = mark_manifest([read], comparison(), {}, [root(EXISTENCE)], "traced rerun")[0]
    assert (shown.status, shown.runs, shown.traced) == ("manifest", [], ["traced rerun"])
    for other in (root(READ_ORDER), root(EXISTENCE, command="cc -c main.c"), root(EXISTENCE, outputs=())):
        assert mark_manifest([read], comparison(), {}, [other], "traced rerun")[0].status == "latent"
