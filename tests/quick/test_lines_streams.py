"""The line search's pure parts: where two tracer streams part, the walk back to the cause,
and the cause's class from what the tracer saw (fuzzer/explain/lines/)."""

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.explain.lines.causes import cause_of, located
from fuzzer.explain.lines.streams import ITERATION, LINE, SOURCE_CALL, Event, Source, Stream, parting
from fuzzer.model import LineCause, LineStatus

FILES = ["/src/gen.py", "/src/lib.py"]
ORDERED = Source("list", ["str"], "", "", "names")


def stream(events, stopped=""):
    return Stream("3.11", "settrace", stopped, 0.1, 1000, FILES, list(events))


lines = st.builds(Event, st.just(LINE), st.integers(0, 1), st.integers(1, 200), st.sampled_from(["main", "emit"]))
ordered_loops = st.builds(Event, st.just(ITERATION), st.integers(0, 1), st.integers(1, 200), st.just("main"),
                          st.text(max_size=5), st.just(ORDERED), st.integers(1, 9))
plain = st.lists(st.one_of(lines, ordered_loops), max_size=30)


def set_loop(value, hashed_by="str", index=1):
    return Event(ITERATION, 0, 40, "finalize", value, Source("set", ["str"], hashed_by, "", "names"), index)


@given(plain)
def test_a_stream_does_not_part_from_itself(events):
    assert parting(stream(events), stream(events)) is None


@given(plain, plain, plain)
def test_a_set_taking_other_values_is_the_cause_however_late_control_flow_parts(prefix, middle, tail):
    a = [*prefix, set_loop("'cd'"), *middle, Event(LINE, 0, 90, "emit"), *tail]
    b = [*prefix, set_loop("'jobs'"), *middle, Event(LINE, 0, 91, "emit"), *tail]
    found = parting(stream(a), stream(b))
    assert found.cause == len(prefix) and found.differed
    assert found.surfaced == len(prefix) + 1 + len(middle)


@given(plain, plain)
def test_control_flow_parting_with_equal_values_walks_back_to_the_nearest_unordered_source(prefix, middle):
    # the values read the same (objects made in the same order): the set is still where order came from
    a = [*prefix, set_loop("<Label#1>", "address"), *middle, Event(LINE, 1, 7, "emit")]
    b = [*prefix, set_loop("<Label#1>", "address"), *middle, Event(LINE, 1, 8, "emit")]
    found = parting(stream(a), stream(b))
    assert (found.cause, found.surfaced, found.differed) == (len(prefix), len(prefix) + 1 + len(middle), False)


@given(plain)
def test_no_unordered_source_before_a_control_flow_parting_names_no_cause(prefix):
    found = parting(stream([*prefix, Event(LINE, 0, 5, "main")]), stream([*prefix, Event(LINE, 0, 6, "main")]))
    assert found.cause is None
    line = located(stream([*prefix, Event(LINE, 0, 5, "main")]), stream([*prefix, Event(LINE, 0, 6, "main")]),
                   found, ["a", "b"], 10.0)
    assert line.status == LineStatus.NOT_FOUND and line.line == 0


@given(plain)
def test_a_stopped_stream_that_agrees_so_far_claims_no_parting(prefix):
    longer = [*prefix, Event(LINE, 0, 5, "main")]
    assert parting(stream(prefix, stopped="its time budget"), stream(longer)) is None


@given(st.sampled_from(["str", "address", "address+str", "own", "value"]), st.sampled_from(["set", "frozenset"]))
def test_a_set_is_classed_by_what_its_elements_hash_follows(hashed_by, container):
    event = Event(ITERATION, 0, 1, "f", "x", Source(container, ["T"], hashed_by, "", "s"), 1)
    expected = {"str": LineCause.SET_OF_STR, "address": LineCause.SET_BY_ADDRESS,
                "address+str": LineCause.SET_BY_ADDRESS}.get(hashed_by, LineCause.SET)
    assert cause_of(event) == expected


@given(st.sampled_from([("os.listdir", LineCause.DIRECTORY_ORDER), ("glob.glob", LineCause.DIRECTORY_ORDER),
                        ("uuid.uuid4", LineCause.UUID), ("random.random", LineCause.RANDOM),
                        ("time.time", LineCause.CLOCK), ("tempfile.mkstemp", LineCause.TEMPFILE),
                        ("id", LineCause.ID_OR_HASH), ("hash", LineCause.ID_OR_HASH)]),
       st.sampled_from([ITERATION, SOURCE_CALL]))
def test_a_value_a_source_call_made_is_classed_by_the_call(call, kind):
    made_by, expected = call
    container = "list" if kind == ITERATION else None
    assert cause_of(Event(kind, 0, 1, "f", "x", Source(container, [], "", made_by, "x"), 1)) == expected


def test_an_ordered_list_or_a_dict_are_not_taken_for_a_set():
    assert cause_of(Event(ITERATION, 0, 1, "f", "x", ORDERED, 1)) == LineCause.UNKNOWN
    keys = Source("dict_keys", ["str"], "str", "", "table")
    assert cause_of(Event(ITERATION, 0, 1, "f", "x", keys, 1)) == LineCause.DICT_ORDER


def test_the_line_found_carries_what_a_patch_needs():
    a = stream([Event(LINE, 0, 3, "main"), set_loop("'cd'", index=3), Event(LINE, 0, 90, "emit")])
    b = stream([Event(LINE, 0, 3, "main"), set_loop("'jobs'", index=3), Event(LINE, 0, 91, "emit")])
    line = located(a, b, parting(a, b), ["PYTHONHASHSEED=1", "PYTHONHASHSEED=2"], 10.0)
    assert (line.status, line.file, line.line, line.function) == (LineStatus.FOUND, "/src/gen.py", 40, "finalize")
    assert (line.cause, line.expression, line.container, line.elements) == (LineCause.SET_OF_STR, "names", "set", ["str"])
    assert (line.element, line.values, line.differed, line.surfaced) == (3, ["'cd'", "'jobs'"], True, "gen.py:90 in emit")


@given(st.floats(0.01, 600), st.floats(0, 10_000))
def test_a_traced_replay_gets_a_budget_a_pair_of_which_fits_in_what_is_left(per_replay_s, left_s):
    from fuzzer.explain.lines.replays import MIN_TRACE_S, TRACE_FACTOR, tracer_budget

    budget = tracer_budget(per_replay_s, left_s)
    if budget is None:
        assert min(max(TRACE_FACTOR * per_replay_s, MIN_TRACE_S), left_s / 4) < 2 * per_replay_s + 0.1
    else:
        assert 2 * per_replay_s <= budget and 2 * budget <= left_s
        assert budget <= max(TRACE_FACTOR * per_replay_s, MIN_TRACE_S)


@given(st.sampled_from([(("PYTHONHASHSEED",), LineCause.SET_OF_STR), (("ASLR",), LineCause.SET_BY_ADDRESS),
                        (("ASLR", "PYTHONHASHSEED"), LineCause.SET_BY_ADDRESS), ((), LineCause.SET_BY_ADDRESS)]))
def test_a_hash_mixing_id_and_its_fields_is_decided_by_what_the_replays_found(found):
    varied, expected = found
    event = Event(ITERATION, 0, 1, "f", "x", Source("set", ["Label"], "address+own", "", "labels"), 1)
    assert cause_of(event, varied) == expected
    plain = Event(ITERATION, 0, 1, "f", "x", Source("set", ["Label"], "address", "", "labels"), 1)
    assert cause_of(plain, varied) == LineCause.SET_BY_ADDRESS  # nothing but the address to follow
