"""A configured tree names its own absolute path (fix/configured.py), and a proof that cannot
build the patched copy at that path says so rather than rebuild a copy that reads the
unpatched tree (fix/proof.py; issue 30, fossil)."""

from __future__ import annotations

import contextlib

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.explain.builds import Selection
from fuzzer.fix import configured
from fuzzer.fix.proof import Proving, prove
from fuzzer.fix.prerequisite import order_only
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Hazard, HazardType, RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation

from conftest import make_project


def test_a_makefile_naming_the_tree_is_found_and_a_longer_sibling_name_is_not(tmp_path):
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "Makefile.in").write_text("SRCDIR = @srcdir@\n")
    (tree / "notes").write_text(f"built once in {tree}2 and {tree}.old\n")
    assert configured.naming_itself(tree) is None
    (tree / "sub").mkdir()
    (tree / "sub" / "Makefile").write_text(f"SRCDIR = {tree}/src\ninclude $(SRCDIR)/main.mk\n")
    assert configured.naming_itself(tree) == Path("sub/Makefile")


def test_a_symlink_to_the_tree_names_it_and_excluded_or_repository_directories_are_not_read(tmp_path):
    tree = tmp_path / "src"
    (tree / ".git").mkdir(parents=True)
    (tree / ".git" / "config").write_text(f"worktree = {tree}\n")
    (tree / "store").mkdir()
    (tree / "store" / "db").write_text(f"{tree}\n")
    assert configured.naming_itself(tree, frozenset({tree / "store"})) is None
    (tree / "link").symlink_to(tree / "store")
    assert configured.naming_itself(tree, frozenset({tree / "store"})) == Path("link")


@given(st.text(alphabet="abc/._- \n", max_size=30))
def test_text_without_the_trees_path_never_names_it(tmp_path_factory, text):
    tree = tmp_path_factory.mktemp("t") / "tree"
    tree.mkdir()
    (tree / "f").write_text(text)
    assert configured.naming_itself(tree) is None


def test_a_configured_tree_that_cannot_be_built_at_its_own_path_is_not_proven_and_nothing_is_built(tmp_path):
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "Makefile").write_text(f"include {tree}/main.mk\n")
    reference = RunRecord(0, Perturbation(jobs=1, cpus=(0,)), RunStatus.OK, 0, 1.0, Manifest({}), "run-0000.log")

    def builder(workspace):
        raise AssertionError("a build was made")

    proving = Proving(reference, Selection((), ()), Workspace(tree, tmp_path / "ws" / "src"), builder,
                      unbindable="no mount namespace here (unshare: not found)")
    proved = prove(proving, "", Perturbation(jobs=4, cpus=(0,)))
    assert proved.counts is None and not proved.proven
    assert "Makefile" in proved.why and str(tree) in proved.why and "unshare: not found" in proved.why


def test_a_rule_make_found_through_the_users_tree_is_patched_as_the_trees_own_file(tmp_path):
    """make's database names a rule a configured Makefile includes by the user's tree's path:
    the patch edits that file in the tree, and a rule outside both trees gets no patch."""
    copy, source = tmp_path / "copy", tmp_path / "src"
    tree = Tree(copy, "make", source=str(source))
    assert tree.relative(source / "src" / "main.mk") == "src/main.mk"
    assert tree.relative(copy / "main.mk") == "main.mk"
    with pytest.raises(NoPatch):
        tree.relative(tmp_path / "elsewhere" / "rules.mk")


def test_every_step_of_a_mkdir_race_gets_the_order_only_directory_in_its_own_rule(tmp_path):
    """fossil: five tool links race `mkdir bld`, each by a rule of its own; the hazard names
    one reader, and a patch ordering only it left the other links racing (its proof failed)."""
    make_project(tmp_path, """
        all: bld bld/a bld/b bld/c
        bld:
            mkdir bld
        bld/a: a.c
            cp a.c bld/a
        bld/b: b.c
            cp b.c bld/b
        bld/c: c.c | bld
            cp c.c bld/c
        """, {"a.c": "a\n", "b.c": "b\n", "c.c": "c\n"})
    hazard = Hazard(HazardType.MKDIR_RACE, "bld/", "cp a.c bld/a", "mkdir bld", finding_id="f",
                    steps=["cp a.c bld/a", "cp b.c bld/b", "cp c.c bld/c", "mkdir bld", "echo no rule runs me"])
    remedy = order_only(hazard, Tree(tmp_path, "make"))
    added = [line for line in remedy.patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+bld/a: a.c | bld", "+bld/b: b.c | bld"]  # bld/c waits already


PATCH = "--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-all:\n+all: stamp\n"


def _proving(tmp_path, before_ok: bool) -> Proving:
    """Builds whose stamp differs every time (a clock), failing before the patch unless `before_ok`."""
    tree = tmp_path / "src"
    tree.mkdir(exist_ok=True)
    (tree / "Makefile").write_text("all:\n")
    stamps = iter(range(100))

    def record(ok: bool) -> RunRecord:
        manifest = Manifest({"stamp": Entry("file", str(next(stamps)))}) if ok else None
        return RunRecord(1, Perturbation(jobs=4, cpus=(0,)), RunStatus.OK if ok else RunStatus.FAILED,
                         0 if ok else 2, 1.0, manifest, "replay.log")

    @contextlib.contextmanager
    def builder(workspace):
        patched = workspace.source != tree
        yield lambda perturbation: record(patched or before_ok)

    reference = record(True)
    return Proving(reference, Selection((), ()), Workspace(tree, tmp_path / "ws" / "src"), builder)


def test_a_finding_that_showed_by_failing_is_proven_by_no_failure_after_whatever_else_differs(tmp_path):
    proved = prove(_proving(tmp_path, before_ok=False), PATCH, Perturbation(jobs=4, cpus=(0,)), after=4)
    assert proved.proven and proved.counts.by_failure, proved
    assert (proved.counts.reproduced, proved.counts.after, proved.counts.still) == (3, 4, 0)


def test_a_finding_that_showed_by_differing_still_shows_when_a_file_differs_after(tmp_path):
    proved = prove(_proving(tmp_path, before_ok=True), PATCH, Perturbation(jobs=4, cpus=(0,)), after=4)
    assert not proved.proven and not proved.counts.by_failure
    assert (proved.counts.reproduced, proved.counts.still) == (3, 1)
