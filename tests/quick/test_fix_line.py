"""The patch to a divergent line (fuzzer/fix/line.py): found by the real tracer on tiny
programs run twice, written, applied to a copy, and the patched program run again in the
conditions that varied: its outputs must agree. And the causes that get words, no patch."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec import structs

from fuzzer.explain.lines import streams
from fuzzer.explain.lines.causes import located
from fuzzer.fix import suggest
from fuzzer.fix.line import in_words, line_remedy
from fuzzer.fix.patch import apply
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit, FixStatus, Kind, LineCause, LineStatus, SourceLine

from test_lines_tracer import traced

TWO_LOOPS = """\
names = {"cd", "echo", "exit", "export", "history", "jobs", "kill", "pwd", "read", "set", "trap", "wait"}
out = []
for name in names:
    out.append(name)
for n, name in enumerate(names):
    out.append(f"{n} {name}")
print(out)
"""

ADDRESSED = """\
import sys


class Label:
    def __init__(self, n, name=None):
        \"\"\"A label, named later.\"\"\"
        self.n = n
        self.name = name

    def __hash__(self):
        return hash(self.name) ^ id(self)


def number(labels):
    for k, label in enumerate(labels):
        label.name = "L%d" % k


labels = set()
for n in range(40):
    labels.add(Label(n))
number(labels)
print(sorted((l.n, l.name) for l in labels))
"""

KEYED = ADDRESSED.replace("labels.add(Label(n))", "labels.add(Label(n, 'x%02d' % n))").replace(
    "hash(self.name) ^ id(self)", "id(self)")


def _line(tmp_path: Path, script: str, envs: list[dict[str, str]]) -> SourceLine:
    for attempt in range(8):  # address-hashed objects iterate alike in about one pair in five
        a = traced(tmp_path, sys.executable, script, f"a{attempt}", **envs[0])
        b = traced(tmp_path, sys.executable, script, f"b{attempt}", **envs[1])
        found = streams.parting(a, b)
        if found is not None:
            return located(a, b, found, ["1", "2"], 10.0)
    raise AssertionError("8 pairs of runs did not part")


def _patched_outputs(tmp_path: Path, line: SourceLine, envs: list[dict[str, str]]) -> set[bytes]:
    culprit = Culprit("python3 prog.py", ["python3", "prog.py"], ".", [], Kind.INTRINSIC, line=line,
                      finding_id="f1")
    remedy = line_remedy(culprit, Tree(tmp_path, "sh build.sh", str(tmp_path)))
    apply(remedy.patch, tmp_path)
    return {subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, env={**os.environ, **env}, check=True,
                           capture_output=True).stdout for env in envs}


def test_a_set_of_strings_is_iterated_sorted_in_every_loop_over_it_and_the_output_no_longer_varies(tmp_path):
    seeds = [{"PYTHONHASHSEED": str(s)} for s in range(1, 7)]
    line = _line(tmp_path, TWO_LOOPS, seeds[:2])
    assert (line.line, line.cause) == (3, LineCause.SET_OF_STR)
    assert len(_patched_outputs(tmp_path, line, seeds)) == 1
    patched = (tmp_path / "prog.py").read_text()
    assert "for name in sorted(names):" in patched and "enumerate(sorted(names))" in patched


def test_objects_hashed_by_address_are_sorted_by_a_creation_order_their_class_stamps(tmp_path):
    line = _line(tmp_path, ADDRESSED, [{}, {}])
    assert (line.line, line.cause, line.keys) == (15, LineCause.SET_BY_ADDRESS, ["n"])
    line = structs.replace(line, keys=[])  # as if they carried none: the class stamps its creation order
    outputs = _patched_outputs(tmp_path, line, [{}] * 6)
    assert len(outputs) == 1
    # creation order: the k-th Label made is numbered k
    assert outputs.pop().decode().strip() == str([(n, "L%d" % n) for n in range(40)])


def test_objects_hashed_by_address_are_sorted_by_an_attribute_each_carried_distinct_in_both_replays(tmp_path):
    line = _line(tmp_path, KEYED, [{}, {}])
    assert line.keys == ["n", "name"]
    assert len(_patched_outputs(tmp_path, line, [{}] * 6)) == 1
    assert "key=lambda element: element.n)" in (tmp_path / "prog.py").read_text()


def test_a_class_without_its_own_init_or_with_slots_and_no_key_gets_no_patch(tmp_path):
    (tmp_path / "prog.py").write_text(ADDRESSED.replace("class Label:", "class Label:\n    __slots__ = ('n', 'name')"))
    line = SourceLine(status=LineStatus.FOUND, file=str(tmp_path / "prog.py"), line=16, function="number",
                      expression="enumerate(labels)", cause=LineCause.SET_BY_ADDRESS, elements=["__main__.Label"])
    culprit = Culprit("python3 prog.py", ["python3", "prog.py"], ".", [], Kind.INTRINSIC, line=line)
    with pytest.raises(NoPatch, match="__slots__"):
        line_remedy(culprit, Tree(tmp_path, "sh build.sh", str(tmp_path)))


@pytest.mark.parametrize("cause", [LineCause.UUID, LineCause.RANDOM, LineCause.CLOCK, LineCause.DICT_ORDER])
def test_a_cause_without_a_safe_patch_gets_the_remedy_in_words(tmp_path, cause):
    (tmp_path / "prog.py").write_text("import uuid\nprint(uuid.uuid4())\n")
    line = SourceLine(status=LineStatus.FOUND, file=str(tmp_path / "prog.py"), line=2, cause=cause)
    culprit = Culprit("python3 prog.py", ["python3", "prog.py"], ".", [], Kind.INTRINSIC, line=line, finding_id="f")
    fixed = suggest.suggest([culprit], [], Tree(tmp_path, "sh build.sh", str(tmp_path)), tmp_path / "fixes")
    assert fixed[0].line is not None and not fixed[0].line.patch and fixed[0].line.by_hand == in_words(line) != ""
    assert fixed[0].line.status == FixStatus.SUGGESTED and fixed[0].line.why
    assert (tmp_path / "prog.py").read_text() == "import uuid\nprint(uuid.uuid4())\n"


def test_a_line_patch_is_written_beside_the_build_files_and_reaches_the_reports_line(tmp_path):
    (tmp_path / "prog.py").write_text(TWO_LOOPS)
    line = SourceLine(status=LineStatus.FOUND, file=str(tmp_path / "prog.py"), line=3, function="<module>",
                      expression="names", cause=LineCause.SET_OF_STR)
    culprit = Culprit("python3 prog.py", ["python3", "prog.py"], ".", [], Kind.INTRINSIC, line=line, finding_id="f")
    fixed = suggest.suggest([culprit], [], Tree(tmp_path, "sh build.sh", str(tmp_path)), tmp_path / "fixes")
    fix = fixed[0].line
    assert fix is not None and fix.status == FixStatus.SUGGESTED and fix.file == "prog.py"
    assert Path(fix.patch).read_text() == fixed[0].line_patch and "+for name in sorted(names):" in fixed[0].line_patch


def test_a_generator_outside_the_source_tree_gets_no_patch(tmp_path):
    line = SourceLine(status=LineStatus.FOUND, file="/usr/lib/python3/dist-packages/peachpy/name.py", line=3,
                      cause=LineCause.SET_OF_STR, expression="names")
    culprit = Culprit("python3 prog.py", ["python3", "prog.py"], ".", [], Kind.INTRINSIC, line=line)
    with pytest.raises(NoPatch, match="outside the source tree"):
        line_remedy(culprit, Tree(tmp_path, "sh build.sh", str(tmp_path)))


@pytest.mark.parametrize("source, patched", [
    ("for name in os.listdir(d):", "for name in sorted(os.listdir(d)):"),
    ("names = [e.path for e in os.scandir(d)]", "names = [e.path for e in sorted(os.scandir(d), key=lambda entry: entry.name)]"),
    ("with os.scandir(d) as it:", None),
])
def test_a_directory_listing_is_sorted_where_it_is_made(tmp_path, source, patched):
    (tmp_path / "prog.py").write_text(f"import os\nd = '.'\n{source}\n    pass\n" if source.endswith(":")
                                      else f"import os\nd = '.'\n{source}\n")
    line = SourceLine(status=LineStatus.FOUND, file=str(tmp_path / "prog.py"), line=3,
                      cause=LineCause.DIRECTORY_ORDER, expression="os.listdir()")
    culprit = Culprit("python3 prog.py", ["python3", "prog.py"], ".", [], Kind.INTRINSIC, line=line)
    tree = Tree(tmp_path, "sh build.sh", str(tmp_path))
    if patched is None:
        with pytest.raises(NoPatch, match="context manager"):
            line_remedy(culprit, tree)
        return
    apply(line_remedy(culprit, tree).patch, tmp_path)
    assert (tmp_path / "prog.py").read_text().splitlines()[2] == patched
    subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, check=True)
