"""`buildfuzz fix`: remedies written in the Makefile's own style, applied exactly, and proven
(or not) by rebuilding the schedule that showed the finding."""

import json
import shutil

import pytest

from conftest import SCENARIOS, buildfuzz, make_project
from fuzzer.fix import makefile
from fuzzer.fix.patch import PatchError, apply, target_file, unified


@pytest.mark.parametrize("line, name, order_only, expected", [
    ("main.o: main.c util.h", "version.h", False, "main.o: main.c util.h version.h"),
    ("main.o: main.c | obj", "version.h", False, "main.o: main.c version.h | obj"),
    ("main.o: main.c ; $(CC) -c main.c", "version.h", False, "main.o: main.c version.h ; $(CC) -c main.c"),
    ("main.o: main.c # the program", "version.h", False, "main.o: main.c version.h # the program"),
    ("obj/%.o: src/%.c src/ring.h", "obj", True, "obj/%.o: src/%.c src/ring.h | obj"),
    ("obj/%.o: src/%.c | bin", "obj", True, "obj/%.o: src/%.c | bin obj"),
])
def test_a_prerequisite_is_added_where_the_rule_lists_them(line, name, order_only, expected):
    assert makefile.with_prerequisite(line, name, order_only) == expected


def test_targets_are_grouped_once_and_a_recipe_line_keeps_its_make_prefixes():
    assert makefile.grouped("a.h b.inc: gen.sh") == "a.h b.inc &: gen.sh"
    assert makefile.grouped("a.h b.inc &: gen.sh") is None
    assert makefile.grouped("CFLAGS := -O2") is None
    assert makefile.prefixed("\t@$(PYTHON) gen.py", "PYTHONHASHSEED=0") == "\t@PYTHONHASHSEED=0 $(PYTHON) gen.py"


def test_a_patch_applies_exactly_once_and_never_outside_the_tree(tmp_path):
    old = ["all: app", "app: main.o", "\tgcc -o app main.o"]
    (tmp_path / "Makefile").write_text("\n".join(old) + "\n")
    patch = unified("Makefile", old, [old[0], "app: main.o util.o", old[2]])
    apply(patch, tmp_path)
    assert (tmp_path / "Makefile").read_text().splitlines()[1] == "app: main.o util.o"
    with pytest.raises(PatchError, match="changed since"):
        apply(patch, tmp_path)
    with pytest.raises(PatchError, match="outside"):
        target_file(patch.replace("b/Makefile", "b/../Makefile"))


def test_the_rule_line_comes_from_makes_database_not_the_command_line(tmp_path):
    make_project(tmp_path, """
        all: app
        # the program
        app: main.o \\
            util.o
            gcc -o $@ main.o util.o
        %.o: %.c
            gcc -c $< -o $@
        """, {"main.c": "int main(void){return 0;}\n", "util.c": "int u;\n"})
    recipes = makefile.recipes(tmp_path, [])
    assert recipes["app"].rule == (3, 4)  # a continued rule: the edge goes on its last line
    assert recipes["app"].lines == (5,)
    assert recipes["main.o"].rule == (6, 6)  # an implicit rule's target is found through the pattern


def assert_usage(proc, text):
    return (proc.returncode, text in proc.stderr, len(proc.stderr.splitlines())) == (2, True, 1)


def test_bad_input_is_one_line_and_exit_2(tmp_path, clean_project):
    assert assert_usage(buildfuzz("fix", "--store", tmp_path / "nowhere"), "no store")
    store = tmp_path / "store"
    assert buildfuzz("run", "--source", clean_project, "--runs", 2, "--no-localize", "--store", store,
                     "--", "make", "-j{jobs}").returncode == 0
    assert assert_usage(buildfuzz("fix", "--store", store, "0123456789ab"), "no culprit or hazard '0123456789ab'")
    assert assert_usage(buildfuzz("fix", "--store", store, "--apply", "0123456789ab"), "no culprit or hazard")
    assert assert_usage(buildfuzz("fix", "--store", store, "--force"), "--force goes with --apply")


def _fixed(tmp_path, source, *, runs=6, after=12):
    """Fuzz `source` copied into tmp_path, then `buildfuzz fix`: the JSON report and fix's output."""
    tree, store, report = tmp_path / "src", tmp_path / "store", tmp_path / "report.json"
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns("scenario.toml"))
    fuzzed = buildfuzz("run", "--source", tree, "--runs", runs, "--seed", 1, "--store", store, "--quiet",
                       "--", "make", "-j{jobs}")
    assert fuzzed.returncode == 1, fuzzed.stderr
    fixed = buildfuzz("fix", "--store", store, "--report-json", report, "--after", after)
    return json.loads(report.read_text()), fixed


def _entry(report, section, **match):
    found = [e for e in report[section] if all(e[k] == v for k, v in match.items())]
    assert found, report[section]
    return found[0]


def _patch_lines(entry) -> list[str]:
    text = open(entry["fix"]).read()
    return [line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


@pytest.mark.slow
def test_a_missing_header_dependency_is_added_and_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "missing-dep-failure")
    hazard = _entry(report, "hazards", type="read-before-write", file="version.h")
    assert hazard["fix_status"].startswith("proven: before "), hazard["fix_status"]
    assert "after 0/12, divergence below 23% at 95%" in hazard["fix_status"]
    assert _patch_lines(hazard) == ["-main.o: main.c util.h", "+main.o: main.c util.h version.h"]
    race = _entry(report, "culprits", kind="race")
    assert race["fix"] == hazard["fix"]  # the race's step is the hazard's reader: one patch


@pytest.mark.slow
def test_a_duplicated_multi_target_recipe_is_grouped_and_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "multi-target-recipe")
    hazard = _entry(report, "hazards", type="duplicate-execution")
    assert hazard["fix_status"].startswith("proven: "), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-opcodes.h optable.inc opnames.inc: opcodes.def mkopcodes.sh",
                                    "+opcodes.h optable.inc opnames.inc &: opcodes.def mkopcodes.sh"]


@pytest.mark.slow
def test_a_mkdir_race_gets_an_order_only_prerequisite_proven_then_applied_once(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "mkdir-race")
    hazard = _entry(report, "hazards", type="mkdir-race")
    assert hazard["fix_status"].startswith("proven: "), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-obj/%.o: src/%.c src/ring.h", "+obj/%.o: src/%.c src/ring.h | obj"]
    assert fixed.returncode == 0, fixed.stdout
    store, finding = tmp_path / "store", hazard["finding_id"]
    assert buildfuzz("fix", "--store", store, "--apply", finding).returncode == 0
    assert "obj/%.o: src/%.c src/ring.h | obj" in (tmp_path / "src" / "Makefile").read_text()
    again = buildfuzz("fix", "--store", store, "--apply", finding)
    assert again.returncode == 2 and "changed since the patch was made" in again.stderr


@pytest.mark.slow
def test_a_hash_seed_generator_gets_its_stabiliser_for_that_step_only(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "hashseed")
    culprit = _entry(report, "culprits", kind="intrinsic")
    assert culprit["fix_status"].startswith("proven: before 3/3 reproduced; after 0/12"), culprit["fix_status"]
    assert _patch_lines(culprit) == ["-\t$(PYTHON) gen_dispatch.py commands.txt $@",
                                     "+\tPYTHONHASHSEED=0 $(PYTHON) gen_dispatch.py commands.txt $@"]
    assert "sort before numbering" in fixed.stdout


@pytest.mark.slow
def test_a_patch_that_leaves_another_cause_is_reported_not_proven(tmp_path):
    """The missing header dependency is real, and its patch right, but the build also records
    the time to the nanosecond: after the patch the builds still differ."""
    source = tmp_path / "given"
    shutil.copytree(SCENARIOS / "missing-dep-failure", source)
    makefile_path = source / "Makefile"
    text = makefile_path.read_text().replace("all: version.h app", "all: version.h app stamp.txt")
    makefile_path.write_text(text + "\nstamp.txt:\n\tdate +%s%N > $@\n")
    report, fixed = _fixed(tmp_path, source, runs=4)
    hazard = _entry(report, "hazards", type="read-before-write", file="version.h")
    assert hazard["fix_status"].startswith("suggested, not proven: before "), hazard["fix_status"]
    assert "still showed it (stamp.txt differs)" in hazard["fix_status"]
    assert fixed.returncode == 1
    assert buildfuzz("fix", "--store", tmp_path / "store", "--apply", hazard["finding_id"]).returncode == 2


@pytest.mark.slow
def test_archive_headers_are_made_deterministic_and_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "ar-mtime", runs=4)
    culprit = _entry(report, "culprits", kind="order")
    assert culprit["fix_status"].startswith("proven: "), culprit["fix_status"]
    assert _patch_lines(culprit) == ["-\tar rcSU $@ $(OBJS)", "+\tar rcSD $@ $(OBJS)"]


@pytest.mark.slow
def test_deterministic_headers_do_not_fix_members_in_completion_order(tmp_path):
    """`ar D` is the obvious patch for an archive that varies, but libops.a's members follow
    `ls -tr`: the proof must say the patch did not fix it."""
    report, fixed = _fixed(tmp_path, SCENARIOS / "archive-order", runs=4)
    culprit = _entry(report, "culprits", kind="order")
    assert _patch_lines(culprit) == ["-\tar rcs $@ $$(ls -tr $(OBJS))", "+\tar rcsD $@ $$(ls -tr $(OBJS))"]
    assert culprit["fix_status"].startswith("suggested, not proven: before "), culprit["fix_status"]
    assert "still showed it (libops.a differs)" in culprit["fix_status"]
