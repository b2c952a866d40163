"""An intrinsic step: one that runs `date` takes the date from SOURCE_DATE_EPOCH (`date`
ignores the variable, and a frozen clock is a test, not a fix); one with a stabiliser gets
the variable for that step only, as a prefix of its recipe line, and the fix in the step's
own code where it is known."""

from __future__ import annotations

import re

from fuzzer.explain.stabilizers import TABLE
from fuzzer.fix import makefile
from fuzzer.fix.archive import tar_gzip
from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit, Stabilizer

WRAPPERS = {"ASLR": "setarch $$(uname -m) -R", "umask": "umask 022;"}  # `$$`: make's escape for the shell's `$`
UPSTREAM = {
    "PYTHONHASHSEED": "iterate sorted(...) instead of a set's or dict's hash order (sort before numbering)",
    "PERL_HASH_SEED": "sort the keys before iterating a hash",
    "ASLR": "never order, hash or print by address (id(), pointer values)",
    "SOURCE_DATE_EPOCH": "take the embedded time from SOURCE_DATE_EPOCH, not the clock",
    "clock": "take the time from SOURCE_DATE_EPOCH, not the clock (a frozen clock is a test, not a fix)",
    "TZ": "format times in UTC",
    "LC_ALL": "sort and format with a fixed locale",
    "HOME": "read nothing from the home directory",
    "umask": "set the modes of the files it writes explicitly",
}


DATE = re.compile(r"(?:^|[\s;&|(`])date(?=\s|$|[;&|)`<>])")  # a command, not a word in quoted text
DATE_GIVEN = re.compile(r"^[^;&|)`]*\s(?:-d|--date|-r|--reference|-f|--file)(?=[\s=]|$)")  # not the clock's
FROM_EPOCH = " -d @$${SOURCE_DATE_EPOCH:-0}"  # make's `$$`; 0 where the variable is not set


def intrinsic(culprit: Culprit, tree: Tree) -> Remedy:
    """A step that nothing but the clock is known to stabilise: the recipe line's `date`
    dated from SOURCE_DATE_EPOCH, or its tar and gzip told to record no time of the build's
    (gzip's header holds the mtime of the file it compresses). Else its stabilisers as a prefix."""
    if set(culprit.stabilized_by) <= {Stabilizer.CLOCK.value}:
        recipe = tree.recipe_of(culprit.command, culprit.cwd, tuple(culprit.outputs))
        lines = tree.lines(recipe)
        index = tree.command_line(recipe, lines, culprit.argv)
        line = lines[index]
        if m := next((m for m in DATE.finditer(line) if not DATE_GIVEN.match(line[m.end():])), None):
            return tree.remedy(culprit.finding_id, f"{recipe.target} dated from SOURCE_DATE_EPOCH, not the clock",
                               recipe, index, line[:m.end()] + FROM_EPOCH + line[m.end():],
                               upstream=UPSTREAM[Stabilizer.SOURCE_DATE_EPOCH.value])
        changed, added = tar_gzip(line)
        if added:
            return tree.remedy(culprit.finding_id, f"{recipe.target} archived with {' and '.join(added)}",
                               recipe, index, changed)
    return stabiliser_prefix(culprit, tree)


def stabiliser_prefix(culprit: Culprit, tree: Tree) -> Remedy:
    if not culprit.stabilized_by:
        raise NoPatch("no stabiliser was found for this step")
    prefix = " ".join(_prefix(name) for name in culprit.stabilized_by)
    recipe = tree.recipe_of(culprit.command, culprit.cwd, tuple(culprit.outputs))
    lines = tree.lines(recipe)
    index = tree.command_line(recipe, lines, culprit.argv)
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
