"""`buildfuzz fix`: remedies written in the Makefile's own style, applied exactly, and proven
(or not) by rebuilding the schedule that showed the finding."""

import functools

import pytest

from fuzzer.fix import makefile
from fuzzer.fix.grouped import grouped_targets
from fuzzer.fix.patch import PatchError, apply, target_file, unified
from fuzzer.fix.tree import Tree, grouped_targets_supported
from fuzzer.model import Hazard
from fuzzer.trace.hazards import DUPLICATE

from conftest import buildfuzz, buildfuzz_in_process, make_project


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


def test_a_command_continued_over_lines_is_edited_on_its_first_line(tmp_path):
    """fossil's `$(OBJDIR)/mkversion a \\ b \\ c >$(OBJDIR)/VERSION.h`: the step's argv names
    words of every line; a stabiliser's prefix belongs before the program, not on a
    continuation line where it would be an argument."""
    lines = ["bld/VERSION.h: mkversion", "\tbld/mkversion manifest.uuid \\", "\t\tmanifest \\",
             "\t\tVERSION >bld/VERSION.h", "\techo done"]
    recipe = makefile.Recipe("bld/VERSION.h", tmp_path / "Makefile", (0, 0), (1, 2, 3, 4))
    argv = ["/bin/sh", "-c", "bld/mkversion manifest.uuid \\\n\tmanifest \\\n\tVERSION >bld/VERSION.h"]
    assert Tree(tmp_path, "make").command_line(recipe, lines, argv) == 1
    single = makefile.Recipe("bld/VERSION.h", tmp_path / "Makefile", (0, 0), (1, 2, 3))
    assert Tree(tmp_path, "make").command_line(single, lines, ["true"]) == 1


def assert_usage(proc, text):
    return (proc.returncode, text in proc.stderr, len(proc.stderr.splitlines())) == (2, True, 1)


def test_bad_input_is_one_line_and_exit_2(tmp_path, clean_project):
    assert assert_usage(buildfuzz("fix", "--store", tmp_path / "nowhere"), "no store")  # the entry point, for real
    store = tmp_path / "store"
    assert buildfuzz_in_process("run", "--source", clean_project, "--runs", 2, "--no-localize", "--store", store,
                                "--", "make", "-j{jobs}").returncode == 0
    fix = functools.partial(buildfuzz_in_process, "fix", "--store", store)
    assert assert_usage(fix("0123456789ab"), "no culprit or hazard '0123456789ab'")
    assert assert_usage(fix("--apply", "0123456789ab"), "no culprit or hazard")
    assert assert_usage(fix("--force"), "--force goes with --apply")
    assert assert_usage(fix("--line"), "--line goes with --apply")


@pytest.mark.skipif(not grouped_targets_supported(), reason="grouped targets need GNU make 4.3")
def test_a_duplicated_recipes_scratch_file_does_not_stop_grouping_its_targets(tmp_path):
    """The recipe's hazard lists every file it writes, its scratch file too: only the ones
    make builds are grouped."""
    make_project(tmp_path, """
        all: a.h b.inc
        a.h b.inc: gen.sh
            sh gen.sh > gen.log
        """, {"gen.sh": "echo x > a.h; echo y > b.inc\n"})
    hazard = Hazard(DUPLICATE, "a.h", "sh gen.sh > gen.log", "sh gen.sh > gen.log", files=["a.h", "b.inc", "gen.log"])
    remedy = grouped_targets(hazard, Tree(tmp_path, "make -j{jobs}"))
    assert "a.h b.inc &: gen.sh" in remedy.patch
