"""Files the runs differed in that the traced divergent build did not (explain/untraced.py):
the step audit's culprit is named for a file its replays saw vary, and only for that file;
the others are listed with no step."""

from __future__ import annotations

from types import SimpleNamespace

from fuzzer.explain import untraced
from fuzzer.model import Culprit, Kind, NoStep
from fuzzer.observe import Entry, Manifest


def _manifest(**digests: str) -> Manifest:
    return Manifest({path.replace("_", "."): Entry("file", d) for path, d in digests.items()})


def _culprit(command: str, *outputs: str) -> Culprit:
    return Culprit(command=command, argv=[command], cwd=".", outputs=list(outputs), kind=Kind.INTRINSIC,
                   stabilized_by=["ASLR"], evidence="step audit: 2 distinct outputs")


def test_each_file_comes_with_the_runs_that_differed_in_it_less_the_traced_ones():
    runs = [SimpleNamespace(ok=True, built=_manifest(a_s="0", b_s="0", c_txt="0")),
            SimpleNamespace(ok=True, built=_manifest(a_s="1", b_s="0", c_txt="1")),
            SimpleNamespace(ok=False),  # a failed run: no manifest to read
            SimpleNamespace(ok=True, built=_manifest(a_s="0", b_s="1", c_txt="1"))]
    comparison = SimpleNamespace(telling_runs=lambda: [2, 1, 3])
    found = untraced.untraced_files(runs, comparison, lambda m: m, traced={"b.s"})
    assert found == {"a.s": [1], "c.txt": [1, 3]}


def test_the_audits_culprit_is_named_for_the_files_its_replays_saw_vary_and_no_other():
    audited = {"gen #0": _culprit("gen", "a.s", "b.s"), "cc #0": _culprit("cc", "x.o")}
    named, unnamed = untraced.seen_by_audit({"a.s": [1], "c.txt": [1, 3]}, audited, "traced rerun")
    assert [(c.command, c.outputs, c.kind, c.stabilized_by) for c in named] == [
        ("gen", ["a.s"], Kind.INTRINSIC, ["ASLR"])]
    assert named[0].evidence.startswith("step audit: 2 distinct outputs")
    assert unnamed == ["c.txt"]
    listed = untraced.unnamed({"a.s": [1], "c.txt": [1, 3]}, unnamed, NoStep.NOT_IN_TRACED_RERUN, None, "traced rerun")
    assert [(u.path, u.runs, u.why, u.traced_run) for u in listed] == [("c.txt", [1, 3], NoStep.NOT_IN_TRACED_RERUN, None)]
    assert untraced.note(listed)[0].endswith(": c.txt")
    assert untraced.note(()) == ()


def test_a_file_a_failed_traced_rerun_never_built_keeps_the_reruns_number_exit_and_failing_target():
    failed = SimpleNamespace(ok=False, index=7, exit_code=2, log_path="logs/trace-0007.log",
                             log_tail="make: *** [Makefile:4: check] Error 1\nmake: *** Waiting for unfinished jobs")
    [stamp] = untraced.unnamed({"stamp.txt": [2, 5]}, ["stamp.txt"], NoStep.TRACED_RERUN_FAILED, failed,
                               "traced rerun (cpus=1)")
    assert (stamp.path, stamp.runs, stamp.why, stamp.traced_run, stamp.exit_code, stamp.failing, stamp.log) == (
        "stamp.txt", [2, 5], NoStep.TRACED_RERUN_FAILED, 7, 2, ["check"], "logs/trace-0007.log")
    assert untraced.note((stamp,))[0].startswith("no step is named for stamp.txt (")
