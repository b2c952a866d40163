"""A recipe for several targets that runs once per target under -j: group its targets
(`a b &: deps`, GNU make 4.3 and later), so make knows one run makes them all."""

from __future__ import annotations

from fuzzer.fix import makefile
from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree, grouped_targets_supported
from fuzzer.model import Hazard


def grouped_targets(hazard: Hazard, tree: Tree, cwd: str = ".") -> Remedy:
    if not grouped_targets_supported():
        raise NoPatch("grouped targets (&:) need GNU make 4.3; here a stamp file is the way "
                      "(one rule makes a stamp, the outputs depend on it)")
    recipes = tree.recipes(cwd)
    # what make builds of the files the recipe writes (not a scratch file or log it also writes)
    files = [f for f in (tree.local(f, cwd) for f in (hazard.files or [hazard.file])) if f in recipes]
    rules = {recipes[f].rule + (str(recipes[f].file),) for f in files}
    if len(rules) != 1:
        raise NoPatch(f"{', '.join(files or hazard.files or [hazard.file])} are not the targets of one make rule")
    recipe = recipes[files[0]]
    lines = tree.lines(recipe)
    first = recipe.rule[0]
    targets = makefile.words(lines[first].split(":", 1)[0])
    if not set(files) <= set(targets):
        raise NoPatch(f"the rule at {recipe.file.name}:{first + 1} does not name {', '.join(files)} itself")
    changed = makefile.grouped(lines[first])
    if changed is None:
        raise NoPatch(f"the rule at {recipe.file.name}:{first + 1} is not a plain `targets: prerequisites` rule")
    return tree.remedy(hazard.finding_id, f"{' '.join(targets)} made by one run of their recipe (grouped targets)",
                       recipe, first, changed)
