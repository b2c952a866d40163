"""Missing edges: the reader's target gains the writer's output as a prerequisite, and a
step writing into a directory another step creates gains it as an order-only one."""

from __future__ import annotations

from fuzzer.fix import makefile
from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.tools.make import Recipe
from fuzzer.model import Hazard


def missing_prerequisite(hazard: Hazard, tree: Tree, cwd: str = ".") -> Remedy:
    """read-before-write: `reader-target: prereqs` gains the file the writer makes."""
    reader = tree.recipe_of(hazard.reader, cwd)
    needed = tree.local(hazard.file, cwd)
    _require_target(tree, needed, cwd, "writes")
    lines = tree.lines(reader)
    if needed in makefile.words(makefile.rule_text(lines, reader).split(":", 1)[1]):
        raise NoPatch(f"{reader.target} already lists {needed}: the race is elsewhere")
    last = reader.rule[1]
    return tree.remedy(hazard.finding_id, f"{makefile.written_targets(lines, reader)} depends on {needed}, "
                       "which it reads",
                       reader, last, makefile.with_prerequisite(lines[last], needed))


def order_only(hazard: Hazard, tree: Tree, cwd: str = ".") -> Remedy:
    """mkdir-race: the rule of each step writing into the directory unordered with the step
    creating it (the hazard's reader, then its other steps whose rule is in the same file)
    gains `| dir`; where no rule makes the directory (a phony `dirs` step does), a rule of its
    own after the reader's recipe, so the fix does not depend on which phony target runs first."""
    writing = tree.recipe_of(hazard.reader, cwd)
    directory = tree.local(hazard.file, cwd)
    lines = tree.lines(writing)
    rules = {r.rule[1]: r for r in [writing, *_others(hazard, tree, cwd)] if r.file == writing.file
             and directory not in makefile.words(makefile.rule_text(lines, r).split(":", 1)[1])}
    changes = {last: [makefile.with_prerequisite(lines[last], directory, order_only=True)] for last in rules}
    made = ""
    if directory not in tree.recipes(cwd):
        end = writing.lines[-1] if writing.lines else writing.rule[1]
        changes[end] = [*changes.get(end, [lines[end]]), "", f"{directory}:", "\tmkdir -p $@"]
        made = f", made by a rule of its own (no rule had {directory} as its target)"
    targets = ", ".join(makefile.written_targets(lines, r) for _, r in sorted(rules.items())) or \
        makefile.written_targets(lines, writing)
    return tree.edits(hazard.finding_id, f"{targets} wait(s) for {directory}/{made} (an order-only prerequisite: "
                      "the directory's mtime does not rebuild it)", writing.file, changes)


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
