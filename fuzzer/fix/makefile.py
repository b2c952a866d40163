"""Where a Makefile declares a target, from make's own database, and the edits a fix makes there.

`make -pn` prints, for each file target with a recipe, `#  recipe to execute (from
'Makefile', line N):`, N being the recipe's first line. The rule line is the logical line
above it (joined over backslash continuations): the place a prerequisite is added, in the
file's own words, rather than a rule guessed from the step's command line.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from fuzzer.tools import make
from fuzzer.tools.make import Recipe

TARGET_LINE = re.compile(r"^(?P<name>[^#\t\s][^:=]*?):(?![=:])")


def recipes(directory: Path, arguments: list[str]) -> dict[str, Recipe]:
    """Each file target with a recipe, by name as make knows it (relative to `directory`)."""
    text = make.database(arguments, str(directory))
    if text is None:
        return {}
    found: dict[str, Recipe] = {}
    target = None
    for line in text.split("# Files", 1)[-1].splitlines():
        if not line.strip():
            target = None
        elif m := TARGET_LINE.match(line):
            target = m["name"].strip()
        elif target and (m := make.RECIPE_FROM.match(line)):
            located = make.located(target, directory / m["file"], int(m["line"]) - 1)
            if located is not None:
                found[target] = located
    return found


def rule_text(lines: list[str], recipe: Recipe) -> str:
    return " ".join(lines[i].rstrip("\\") for i in range(recipe.rule[0], recipe.rule[1] + 1))


def written_targets(lines: list[str], recipe: Recipe) -> str:
    """The rule's targets as the file writes them (`obj/%.o` for a pattern rule's file)."""
    return lines[recipe.rule[0]].split(":", 1)[0].strip()


def with_prerequisite(line: str, name: str, order_only: bool = False) -> str:
    """The rule line with `name` added to its normal (or order-only) prerequisites."""
    body, comment = _split(line, "#")
    body, inline = _split(body, ";")
    body = body.rstrip()
    if order_only:
        body += f" {name}" if "|" in body else f" | {name}"
    elif "|" in body:
        normal, after = body.split("|", 1)
        body = f"{normal.rstrip()} {name} |{after}"
    else:
        body += f" {name}"
    return body + (f" ;{inline}" if inline is not None else "") + (f" #{comment}" if comment is not None else "")


def grouped(line: str) -> str | None:
    """The rule line with its targets grouped (`a b &: deps`), or None when it is not a plain rule."""
    m = re.match(r"^(?P<targets>[^:=]+?)\s*:(?![=:&])", line)
    if m is None or "&" in m["targets"]:
        return None
    return f"{m['targets']} &:{line[m.end():]}"


def prefixed(line: str, prefix: str) -> str:
    """A recipe line with `prefix` before its command, after make's own `@`, `-` and `+`."""
    m = re.match(r"^\t[@+\-\s]*", line)
    assert m is not None, f"not a recipe line: {line!r}"
    return line[: m.end()] + prefix + " " + line[m.end():]


def words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=False)
    except ValueError:
        return line.split()


def _split(text: str, mark: str) -> tuple[str, str | None]:
    if mark not in text:
        return text, None
    head, tail = text.split(mark, 1)
    return head, tail
