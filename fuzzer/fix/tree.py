"""The user's build as the remedies see it: make's recipes per directory, a step's target,
and one edited line as a patch."""

from __future__ import annotations

import functools
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.fix import makefile
from fuzzer.fix.makefile import Recipe
from fuzzer.fix.patch import Remedy, unified
from fuzzer.tools import make

OUTPUT_FLAGS = ("-o", ">", ">>")  # the word after one of these is what a command writes


class NoPatch(Exception):
    """There is no patch for this finding here: the message says why."""


@dataclass
class Tree:
    root: Path  # a copy of the user's source: make's database runs $(shell ...) lines
    command: str  # the build command (`make -j{jobs}`)
    _recipes: dict[str, dict[str, Recipe]] = field(default_factory=dict)

    def recipes(self, cwd: str) -> dict[str, Recipe]:
        if cwd not in self._recipes:
            arguments = make.make_arguments(shlex.split(self.command.replace("{jobs}", "1"))) if cwd == "." else []
            if arguments is None:
                raise NoPatch("the build is not one make call: no make database to find the rule in")
            self._recipes[cwd] = makefile.recipes(self.root / cwd, arguments)
        return self._recipes[cwd]

    def recipe_of(self, command: str, cwd: str, outputs: tuple[str, ...] = ()) -> Recipe:
        """The make target whose recipe ran `command`: one of its outputs, else the one word
        of the command naming a target (the word after -o or > first)."""
        recipes = self.recipes(cwd)
        named = [o for o in (self.local(o, cwd) for o in outputs) if o in recipes]
        if not named:
            said = makefile.words(command)
            written = [w for i, w in enumerate(said) if i and said[i - 1] in OUTPUT_FLAGS and w in recipes]
            named = written or [w for w in said if w in recipes]
        found = {recipes[n].rule + (str(recipes[n].file),): recipes[n] for n in named}
        if len(found) != 1:
            raise NoPatch(f"cannot tell which make rule runs `{command}` ({len(found)} candidates)")
        return next(iter(found.values()))

    def local(self, path: str, cwd: str) -> str:
        """A source-relative path as make names it in `cwd`."""
        return os.path.normpath(os.path.relpath(path.rstrip("/") or ".", cwd))

    def lines(self, recipe: Recipe) -> list[str]:
        return recipe.file.read_text(encoding="utf-8").splitlines()

    def command_line(self, recipe: Recipe, lines: list[str], argv: list[str]) -> int:
        """The recipe line that runs a step: the only one, or the only one naming its arguments."""
        if len(recipe.lines) == 1:
            return recipe.lines[0]
        named = {os.path.basename(a) for a in argv[1:]}
        matching = [i for i in recipe.lines if named & {os.path.basename(w) for w in makefile.words(lines[i])}]
        if len(matching) != 1:
            raise NoPatch(f"cannot tell which of the recipe's {len(recipe.lines)} lines runs the step")
        return matching[0]

    def remedy(self, finding_id: str, summary: str, recipe: Recipe, index: int, new_line: str,
               upstream: str = "") -> Remedy:
        """The remedy that replaces line `index` of the recipe's file with `new_line`."""
        old = self.lines(recipe)
        new = old[:index] + [new_line] + old[index + 1:]
        relative = str(recipe.file.relative_to(self.root))
        return Remedy(finding_id, summary, relative, unified(relative, old, new), upstream=upstream)


@functools.cache
def grouped_targets_supported() -> bool:
    found = make.version()
    return found is not None and found >= (4, 3)
