"""Missing edges: the reader's target gains the writer's output as a prerequisite, and a
step writing into a directory another step creates gains it as an order-only one."""

from __future__ import annotations

from fuzzer.fix import makefile
from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Hazard
from fuzzer.tools import make
from fuzzer.tools.make import Recipe


def missing_prerequisite(hazard: Hazard, tree: Tree, cwd: str = ".") -> Remedy:
    """read-before-write: every rule reading the file without naming it gains the file the
    writer makes (the hazard's `rules`, else the reader's)."""
    needed = tree.local(hazard.file, cwd)
    if tree.recipes(cwd):  # else make's database cannot be read in the unbuilt source (a configured build)
        _require_target(tree, needed, cwd, "writes")
    rules = _lacking(hazard, tree, cwd)
    lines = tree.lines(rules[0])
    changes = {r.rule[1]: [makefile.with_prerequisite(lines[r.rule[1]], needed)] for r in rules
               if needed not in makefile.words(makefile.rule_text(lines, r).split(":", 1)[1])}
    if not changes:
        raise NoPatch(f"{_targets(lines, rules)} already lists {needed}: the race is elsewhere")
    return tree.edits(hazard.finding_id, f"{_targets(lines, rules)} depends on {needed}, which it reads",
                      rules[0].file, changes)


def order_only(hazard: Hazard, tree: Tree, cwd: str = ".") -> Remedy:
    """mkdir-race: every rule of a step writing into the directory unordered with it (the
    hazard's `rules`, else the reader's and its other steps' in the same file) that does not
    list it yet gains `| dir`; where no rule makes the directory (a phony `dirs` step does),
    a rule of its own after the first one's recipe, so the fix does not depend on which
    phony target runs first."""
    directory = tree.local(hazard.file, cwd)
    found = _lacking(hazard, tree, cwd)
    lines = tree.lines(found[0])
    rules = [r for r in found if directory not in makefile.words(makefile.rule_text(lines, r).split(":", 1)[1])] \
        or found[:1]
    changes = {r.rule[1]: [makefile.with_prerequisite(lines[r.rule[1]], directory, order_only=True)] for r in rules}
    made, recipes = "", tree.recipes(cwd)
    if recipes and directory not in recipes:
        end = rules[0].lines[-1] if rules[0].lines else rules[0].rule[1]
        changes[end] = [*changes.get(end, [lines[end]]), "", f"{directory}:", "\tmkdir -p $@"]
        made = f", made by a rule of its own (no rule had {directory} as its target)"
    elif not recipes:
        made = (f" (make's database cannot be read in the unbuilt source: where no rule makes {directory}, add "
                f"`{directory}:` with `mkdir -p $@`)")
    return tree.edits(hazard.finding_id, f"{_targets(lines, rules)} waits for {directory}/{made} (an order-only "
                      "prerequisite: the directory's mtime does not rebuild it)", rules[0].file, changes)


def _lacking(hazard: Hazard, tree: Tree, cwd: str) -> list[Recipe]:
    """The rules lacking the hazard's edge, in one file: every one the report named (`rules`,
    from make's database where the build ran, below a wrapper too), else the reader's and
    those of the hazard's other steps in the reader's file."""
    if not hazard.rules:
        reader = tree.recipe_of(hazard.reader, cwd)
        return [reader, *(r for r in _others(hazard, tree, cwd) if r.file == reader.file)]
    found = []
    for rule in hazard.rules:
        file, _, line = rule.rpartition(":")
        recipe = make.rule_at(tree.root / file, int(line) - 1) if line.isdecimal() else None
        if recipe is None:
            raise NoPatch(f"the source has no rule at {rule} (a file the build generates?)")
        found.append(recipe)
    files = sorted({str(r.file.relative_to(tree.root)) for r in found})
    if len(files) > 1:
        raise NoPatch(f"the rules lacking it are in {len(files)} files ({', '.join(files)}): edit each by hand")
    return found


def _targets(lines: list[str], rules: list[Recipe]) -> str:
    return ", ".join(dict.fromkeys(makefile.written_targets(lines, r) for r in rules))


def _others(hazard: Hazard, tree: Tree, cwd: str) -> list[Recipe]:
    """The rules of the hazard's other steps writing into the directory, where make names one."""
    found = []
    for step in hazard.steps:
        if step not in (hazard.reader, hazard.writer):
            try:
                found.append(tree.recipe_of(step, cwd))
            except NoPatch:
                continue  # a step no rule runs alone (a recipe's later line): ordered through its rule's others
    return found


def _require_target(tree: Tree, name: str, cwd: str, does: str) -> None:
    if name not in tree.recipes(cwd):
        raise NoPatch(f"no make rule has {name} as its target (the step that {does} it is not a rule of its own)")
