"""A configured tree names its own absolute path (fix/configured.py), and a proof that cannot
build the patched copy at that path says so rather than rebuild a copy that reads the
unpatched tree (fix/proof.py; issue 30, fossil)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.explain.builds import Selection
from fuzzer.fix import configured
from fuzzer.fix.proof import Proving, prove
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import RunStatus
from fuzzer.observe import Manifest
from fuzzer.plan import Perturbation


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
