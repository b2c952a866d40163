"""The cause block's one evidence line is the strongest single fact for the culprit's kind,
made from its typed `key` (issue 31): the replays and their distinct outputs (intrinsic),
the file and the run that showed a race, and what that run did that a plain build never
does (a held step), the two read orders (order), the directory recorded (build-path).
Where no key was typed, the prose's first clauses stand in."""

from __future__ import annotations

from msgspec import structs

from fuzzer import hold
from fuzzer.model import Culprit, KeyEvidence, Kind, Report, WriterProcess
from fuzzer.report import html, markdown, text
from fuzzer.report.cause_block import cause_block
from fuzzer.report.causes import causes
from tests.report_samples import unreproducible

PROSE = "its inputs are identical in both builds; replayed alone 5 times with its traced argv it gave 2 outputs"
MKDIR = ("mkdir", "-p", "obj")


def _culprit(kind: Kind, key: KeyEvidence | None, **extra) -> Culprit:
    return Culprit(command="cc -c a.c -o obj/a.o", argv=["cc", "-c", "a.c", "-o", "obj/a.o"], cwd=".",
                   outputs=["obj/a.o"], kind=kind, evidence=PROSE, key=key, **extra)


def _evidence(culprit: Culprit, report: Report | None = None) -> str:
    report = structs.replace(report or unreproducible(), culprits=[culprit], hazards=[])
    [fact] = [f for f in cause_block(1, causes(report), report).facts if f.name == "evidence"]
    return fact.value


def _held_back(report: Report, run: int, argv: tuple[str, ...]) -> Report:
    """`run` held the step with `argv` back, as the schedule's hold axis writes it."""
    runs = [structs.replace(r, perturbation={**r.perturbation, "variations": {"hold": f"300@{hold.argv_hash(argv)}"}})
            if r.index == run else r for r in report.runs]
    return structs.replace(report, runs=runs)


def test_intrinsic_says_its_replays_and_distinct_outputs():
    line = _evidence(_culprit(Kind.INTRINSIC, KeyEvidence(replays=7, distinct=3)))
    assert "7" in line and "3" in line and line != PROSE.split(";")[0]


def test_a_race_names_its_file_and_the_run_with_what_it_held_back():
    key = KeyEvidence(file="obj/", run=4)
    culprit = _culprit(Kind.RACE, key, other_step=" ".join(MKDIR))
    held = _evidence(culprit, _held_back(unreproducible(), 4, MKDIR))
    assert "obj/" in held and "run 4" in held and " ".join(MKDIR) in held
    plain = _evidence(culprit)
    assert "run 4" in plain and " ".join(MKDIR) not in plain  # no hold in run 4: nothing held is named
    assert "run" not in _evidence(_culprit(Kind.RACE, KeyEvidence(file="obj/", run=99)))  # a run not in the report


def test_a_held_recipe_line_is_named_by_its_line():
    line = "sed 's/@F@/fast/' config.h.in > config.h"  # make ran it as /bin/sh -c LINE; the report names the line
    culprit = _culprit(Kind.RACE, KeyEvidence(file="config.h", run=2), other_step=line)
    assert line in _evidence(culprit, _held_back(unreproducible(), 2, ("/bin/sh", "-c", line)))


def test_an_order_shows_both_read_orders():
    key = KeyEvidence(file="b.o", run=2, reference_order=["a.o", "b.o"], run_order=["b.o", "a.o"])
    line = _evidence(_culprit(Kind.ORDER, key))
    assert "b.o, a.o" in line and "a.o, b.o" in line and "run 2" in line


def test_build_path_shows_the_directory_recorded():
    writer = WriterProcess(command="cc", argv=["cc"], cwd="/tmp/b-XXXX", identity="cc", wrote=[], replayed=False,
                           recorded_dir="/tmp/build-via-sdist-XXXXXXXX")
    assert "/tmp/build-via-sdist-XXXXXXXX" in _evidence(_culprit(Kind.BUILD_PATH, None, writer_process=writer))


def test_without_a_key_the_prose_stands_in_and_a_key_of_another_kind_is_not_read():
    assert _evidence(_culprit(Kind.UNKNOWN, None)) == PROSE.split("; ")[0] + "; " + PROSE.split("; ")[1]
    assert _evidence(_culprit(Kind.PARALLELISM_LEVEL, KeyEvidence(replays=5, distinct=5))).startswith("its inputs")


def test_every_format_shows_the_line():
    report = structs.replace(unreproducible(), culprits=[_culprit(Kind.INTRINSIC, KeyEvidence(replays=6, distinct=2))],
                             hazards=[])
    line = _evidence(report.culprits[0], report)
    for rendered in (text.render(report), markdown.render(report), html.render(report)):
        assert line in rendered
