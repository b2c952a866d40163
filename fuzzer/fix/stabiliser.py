"""An intrinsic step with a stabiliser: the variable set for that step only, as a prefix
of its recipe line, and the fix in the step's own code where it is known."""

from __future__ import annotations

import os

from fuzzer.explain.stabilizers import TABLE
from fuzzer.fix import makefile
from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.report.model import Culprit

WRAPPERS = {"ASLR": "setarch $$(uname -m) -R", "umask": "umask 022;"}  # `$$`: make's escape for the shell's `$`
UPSTREAM = {
    "PYTHONHASHSEED": "iterate sorted(...) instead of a set's or dict's hash order (sort before numbering)",
    "PERL_HASH_SEED": "sort the keys before iterating a hash",
    "ASLR": "never order, hash or print by address (id(), pointer values)",
    "SOURCE_DATE_EPOCH": "take the embedded time from SOURCE_DATE_EPOCH, not the clock",
    "TZ": "format times in UTC",
    "LC_ALL": "sort and format with a fixed locale",
    "HOME": "read nothing from the home directory",
    "umask": "set the modes of the files it writes explicitly",
}


def stabiliser_prefix(culprit: Culprit, tree: Tree) -> Remedy:
    if not culprit.stabilized_by:
        raise NoPatch("no stabiliser was found for this step")
    prefix = " ".join(_prefix(name) for name in culprit.stabilized_by)
    recipe = tree.recipe_of(culprit.command, culprit.cwd, tuple(culprit.outputs))
    lines = tree.lines(recipe)
    index = _recipe_line(recipe.lines, lines, culprit.argv)
    upstream = "; ".join(UPSTREAM[n] for n in culprit.stabilized_by if n in UPSTREAM)
    return tree.remedy(culprit.finding_id, f"{recipe.target} built with {prefix} (that step only)",
                       recipe, index, makefile.prefixed(lines[index], prefix), upstream=upstream)


def _prefix(name: str) -> str:
    if name in WRAPPERS:
        return WRAPPERS[name]
    env = next((v.env for v, _ in TABLE if v.name == name and v.env), None)
    if env is None:
        raise NoPatch(f"{name} has no recipe prefix (a fixed clock is a test, not a fix)")
    return " ".join(f"{key}={value}" for key, value in env)


def _recipe_line(candidates: tuple[int, ...], lines: list[str], argv: list[str]) -> int:
    """The recipe line that runs the step: the only one, or the only one naming its arguments."""
    if len(candidates) == 1:
        return candidates[0]
    named = {os.path.basename(a) for a in argv[1:]}
    matching = [i for i in candidates if named & {os.path.basename(w) for w in makefile.words(lines[i])}]
    if len(matching) != 1:
        raise NoPatch(f"cannot tell which of the recipe's {len(candidates)} lines runs the step")
    return matching[0]
