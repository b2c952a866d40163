"""The user's build as the remedies see it: which build system declares it (make, a
hand-written build.ninja, CMake), make's recipes per directory, a step's target, its
command's words as source-relative paths, and edited lines as a patch."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.fix import makefile
from fuzzer.fix.makefile import Recipe
from fuzzer.fix.patch import Remedy, unified
from fuzzer.tools import make, ninja

MAKE, NINJA, CMAKE = "make", "ninja", "cmake"
OUTPUT_FLAGS = ("-o", ">", ">>")  # the word after one of these is what a command writes


class NoPatch(Exception):
    """There is no patch for this finding here: the message says why."""


@dataclass
class Tree:
    root: Path  # a copy of the user's source: make's database runs $(shell ...) lines
    command: str  # the build command (`make -j{jobs}`)
    workspace: str = ""  # where the campaign built it: the steps' commands name their files under it
    source: str = ""  # the user's tree, which a configured tree's files name (`include /src/main.mk`)
    _recipes: dict[str, dict[str, Recipe]] = field(default_factory=dict)

    @functools.cached_property
    def argv(self) -> list[str]:
        return makefile.words(self.command.replace("{jobs}", "1"))

    @functools.cached_property
    def system(self) -> str:
        """make or ninja when the build is one call of it, cmake for a CMake project built
        through cmake, else "" (no build file the remedies know how to edit)."""
        if make.make_arguments(self.argv) is not None:
            return MAKE
        if ninja.graph_arguments(self.argv) is not None:
            return NINJA
        if any(os.path.basename(w) == "cmake" for w in self.argv) and (self.root / "CMakeLists.txt").is_file():
            return CMAKE
        return ""

    def words(self, command: str) -> list[str]:
        """A step's command as words, its paths under the workspace made source-relative."""
        prefix = self.workspace.rstrip("/") + "/"
        return [os.path.normpath(w[len(prefix):]) if self.workspace and w.startswith(prefix)
                else "." if self.workspace and w == prefix.rstrip("/") else w for w in makefile.words(command)]

    def recipes(self, cwd: str) -> dict[str, Recipe]:
        if cwd not in self._recipes:
            # a make below a wrapper (`./configure && make`) is taken as plain `make` where it ran
            arguments = (make.make_arguments(self.argv) if cwd == "." else None) or []
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
        """The first line of the recipe command that runs a step: the only one, or the only one
        naming its arguments. A command continued over lines (`\\`) is one command, edited on
        its first line: a prefix on a later one would be an argument (fossil's mkversion)."""
        starts = [i for i in recipe.lines if i == recipe.lines[0] or not lines[i - 1].endswith("\\")]
        if len(starts) == 1:
            return starts[0]
        named = {os.path.basename(a) for a in argv[1:]}
        matching = sorted({max(s for s in starts if s <= i) for i in recipe.lines
                           if named & {os.path.basename(w) for w in makefile.words(lines[i])}})
        if len(matching) != 1:
            raise NoPatch(f"cannot tell which of the recipe's {len(starts)} commands runs the step")
        return matching[0]

    def remedy(self, finding_id: str, summary: str, recipe: Recipe, index: int, new_line: str,
               upstream: str = "") -> Remedy:
        """The remedy that replaces line `index` of the recipe's file with `new_line`."""
        return self.edit(finding_id, summary, recipe.file, index, [new_line], upstream)

    def edit(self, finding_id: str, summary: str, file: Path, index: int, new_lines: list[str],
             upstream: str = "") -> Remedy:
        """The remedy that replaces line `index` of `file` with `new_lines`."""
        return self.edits(finding_id, summary, file, {index: new_lines}, upstream)

    def edits(self, finding_id: str, summary: str, file: Path, changes: dict[int, list[str]],
              upstream: str = "") -> Remedy:
        """The remedy that replaces each line `index` of `file` with its `changes[index]`."""
        old = file.read_text(encoding="utf-8").splitlines()
        new = [n for i, line in enumerate(old) for n in changes.get(i, [line])]
        relative = self.relative(file)
        return Remedy(finding_id, summary, relative, unified(relative, old, new), upstream=upstream)

    def relative(self, file: Path) -> str:
        """A file of the tree, source-relative: make names one a configured Makefile includes
        by the user's tree's absolute path (`include /src/main.mk`), which the patch edits too."""
        for top in (self.root, Path(self.source) if self.source else None):
            if top is not None and file.is_relative_to(top):
                return str(file.relative_to(top))
        raise NoPatch(f"the rule is in {file}, outside the tree: a patch edits the tree only")


@functools.cache
def grouped_targets_supported() -> bool:
    found = make.version()
    return found is not None and found >= (4, 3)
