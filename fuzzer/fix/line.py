"""A patch to an intrinsic Python step's first divergent line (`Culprit.line`, found by
fuzzer/explain/lines/), where its cause has a standard remedy, else that remedy in words.

- A set of strings iterated (`set-of-str`): iterate `sorted(...)`.
- A set of objects hashed by address (`set-by-address`): iterate `sorted(..., key=...)` by
  an attribute the tracer saw every element carry with a distinct str or int value, the
  same values in both replays; without one, by creation order, stamped by the elements'
  own class (its `__init__`, in the same file) from a counter.
- A directory listed (`directory-order`): `sorted(os.listdir(...))`, a scandir by name.

Every other loop over the same expression in the same function is sorted alike: a second
loop over the set (an emitter after a numbering loop) would keep the hash order. The key
never follows an address; whether the patch works is for the rebuilds (fix/proof.py) to
show, never assumed. Uuids, random, the clock, tempfile names and id()/hash() as data have
no safe patch: which inputs identify a build, or what seed to use, is the author's call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit, LineCause, LineStatus, SourceLine

WRAPPERS = ("enumerate", "reversed", "list", "tuple", "iter")  # a loop's iterable wrapped: sorted goes inside
LISTINGS = {"listdir": "", "glob": "", "iglob": "", "scandir": ", key=lambda entry: entry.name"}
LOOPS = (ast.For, ast.AsyncFor, ast.comprehension)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
ORDER, COUNTER = "_creation_order", "_creations"  # what a class stamps its objects with, and from
IN_WORDS = {
    LineCause.UUID: "derive the identifier from the build's inputs (uuid.uuid5 over their digest) or take it from "
                    "the environment, as SOURCE_DATE_EPOCH is",
    LineCause.RANDOM: "seed the generator from a fixed value (random.Random(seed) for this use)",
    LineCause.CLOCK: "take the time from SOURCE_DATE_EPOCH, not the clock",
    LineCause.TEMPFILE: "keep temporary names out of what it writes",
    LineCause.ID_OR_HASH: "write a stable field of the object, not its id() or hash()",
    LineCause.DICT_ORDER: "sort where the dict is filled from the unordered iteration, or iterate it sorted",
    LineCause.SET: "iterate the set sorted by a field of its elements",
    LineCause.SET_OF_STR: "iterate the set sorted: sorted(...)",
    LineCause.SET_BY_ADDRESS: "iterate the set sorted by a field of its elements that follows no address (a name, "
                              "a creation counter)",
    LineCause.DIRECTORY_ORDER: "sort the listing: sorted(os.listdir(...))",
}
WHY_NOT = {
    LineCause.UUID: "which inputs identify the build is the author's call",
    LineCause.RANDOM: "a patch cannot tell which calls share the generator, nor what a fixed seed changes",
}


@dataclass
class Edits:
    """Lines of one file: some replaced, some with lines put before them (0-based)."""

    lines: list[str]
    replaced: dict[int, str] = field(default_factory=dict)
    before: dict[int, list[str]] = field(default_factory=dict)

    def changes(self) -> dict[int, list[str]]:
        return {i: [*self.before.get(i, []), self.replaced.get(i, self.lines[i])]
                for i in sorted({*self.replaced, *self.before})}


def line_remedy(culprit: Culprit, tree: Tree) -> Remedy:
    """The patch to the culprit's line; NoPatch with the remedy's words where there is none."""
    line = culprit.line
    if line is None or line.status != LineStatus.FOUND:
        raise NoPatch("no divergent line was found")
    if line.cause not in (LineCause.SET_OF_STR, LineCause.SET_BY_ADDRESS, LineCause.DIRECTORY_ORDER):
        raise NoPatch(WHY_NOT.get(line.cause, f"no safe patch is known for a line of cause {line.cause}"))
    file = tree.root / _relative(line.file, tree)
    try:
        text = file.read_text(encoding="utf-8")
        module = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError) as e:
        raise NoPatch(f"{file.name} cannot be read as Python here: {e}") from None
    edits = Edits(text.splitlines())
    if line.cause == LineCause.DIRECTORY_ORDER:
        summary = _sorted_listing(module, edits, line)
    else:
        key, how = _key(module, edits, line)
        others = _sorted_loops(module, edits, line, key) - 1
        also = f", as does {'the other loop' if others == 1 else f'each of the {others} other loops'} over it in " \
            f"{line.function}" if others else ""
        summary = f"{Path(line.file).name}:{line.line}: iterates `sorted({_target(module, line)}{key})` {how}{also}"
    return tree.edits(culprit.finding_id, summary, file, edits.changes(), upstream=summary)


def in_words(line: SourceLine) -> str:
    """The remedy by hand for a line whose cause has no patch ("" when none is known)."""
    return IN_WORDS.get(line.cause, "") if line.status == LineStatus.FOUND else ""


def _relative(file: str, tree: Tree) -> str:
    """The generator's path in the source tree: the replays ran at the campaign's path."""
    prefix = tree.workspace.rstrip("/") + "/"
    if not tree.workspace or not file.startswith(prefix):
        raise NoPatch(f"the generator `{file}` lives outside the source tree: a patch is written and proven for "
                      "files in the tree only")
    return file[len(prefix):]


def _key(module: ast.Module, edits: Edits, line: SourceLine) -> tuple[str, str]:
    """The sort key's argument and what it is, in words."""
    if line.cause == LineCause.SET_OF_STR:
        return "", "(strings: their own order)"
    if line.keys:
        return (f", key=lambda element: element.{line.keys[0]}",
                f"by `{line.keys[0]}`, which every element carried with a distinct value, the same in both replays")
    if len(line.elements) != 1:
        raise NoPatch(f"its elements are of {len(line.elements)} types ({', '.join(line.elements)}) and carry no "
                      "attribute with distinct values: no key to sort them by")
    name = line.elements[0].rsplit(".", 1)[-1]
    _stamp_creation(module, edits, name)
    return f", key=lambda element: element.{ORDER}", f"by creation order (`{name}.__init__` stamps it)"


def _stamp_creation(module: ast.Module, edits: Edits, name: str) -> None:
    """`name`'s __init__ numbers its objects in creation order, from a class counter."""
    cls = next((n for n in module.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    if cls is None:
        raise NoPatch(f"its elements' class `{name}` is not defined at the top of the file that iterates them, and "
                      "they carry no attribute with distinct values: no key to sort them by")
    if any(ORDER in line or COUNTER in line for line in edits.lines):
        raise NoPatch(f"the file already uses the names {ORDER} or {COUNTER}")
    if any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__slots__" for t in n.targets) for n in cls.body):
        raise NoPatch(f"`{name}` has __slots__ (no room for a creation order) and its objects carry no attribute "
                      "with distinct values: no key to sort them by")
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    body = [s for s in init.body if not _docstring(s)] if init is not None else []
    if init is None or not body or body[0].lineno == init.lineno:
        raise NoPatch(f"`{name}` has no __init__ of its own to stamp a creation order in (or one on one line)")
    first, start = body[0].lineno - 1, min([init.lineno, *(d.lineno for d in init.decorator_list)]) - 1
    indent = _indent(edits.lines[first])
    edits.before.setdefault(start, []).extend([
        f"{_indent(edits.lines[start])}{COUNTER} = itertools.count()  # numbers objects in creation order: a sort "
        "key that follows no address", ""])
    edits.before.setdefault(first, []).append(f"{indent}self.{ORDER} = next({name}.{COUNTER})")
    _import_itertools(module, edits)


def _import_itertools(module: ast.Module, edits: Edits) -> None:
    if any(isinstance(n, ast.Import) and any(a.name == "itertools" and not a.asname for a in n.names)
           for n in module.body):
        return
    statements = [n for n in module.body if not _docstring(n)
                  and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    if not statements:
        raise NoPatch("the file has no statement to put an import before")
    at = next((n for n in statements if isinstance(n, (ast.Import, ast.ImportFrom))), None)
    lines = ["import itertools"] if at is not None else ["import itertools", "", ""]  # before code: PEP 8's gap
    start = (at or statements[0]).lineno - 1
    edits.before[start] = lines + edits.before.get(start, [])


def _sorted_loops(module: ast.Module, edits: Edits, line: SourceLine, key: str) -> int:
    """Sort the line's iterable and every other loop over the same expression in its scope."""
    target = _target(module, line)
    scope = _scope(module, line.line)
    found = [it for it in map(_unwrapped, _iterables(scope)) if ast.unparse(it) == target]
    if not any(it.lineno == line.line for it in found):
        raise NoPatch(f"the loop on line {line.line} is not where its scope's loops were looked for")
    for node in sorted(found, key=lambda n: (n.lineno, -n.col_offset)):
        _wrap(edits, node, "sorted(", f"{key})")
    return len(found)


def _target(module: ast.Module, line: SourceLine) -> str:
    """What the line's loop iterates, its wrappers (enumerate, ...) taken off, as source."""
    at = [it for it in _iterables(module, nested=True) if it.lineno == line.line]
    try:
        said = ast.unparse(ast.parse(line.expression, mode="eval").body) if line.expression else ""
    except SyntaxError:
        raise NoPatch(f"the tracer's expression `{line.expression}` is not Python source") from None
    named = [it for it in at if ast.unparse(it) == said] if said else at
    if len(named) != 1:
        raise NoPatch(f"cannot tell which loop on line {line.line} iterates `{line.expression}` ({len(named)} found)")
    return ast.unparse(_unwrapped(named[0]))


def _sorted_listing(module: ast.Module, edits: Edits, line: SourceLine) -> str:
    calls = [n for n in ast.walk(module) if isinstance(n, ast.Call) and n.lineno == line.line
             and _called(n) in LISTINGS]
    if len(calls) != 1:
        raise NoPatch(f"cannot tell which listing on line {line.line} is iterated ({len(calls)} listing calls)")
    if any(isinstance(n, ast.withitem) and n.context_expr is calls[0] for n in ast.walk(module)):
        raise NoPatch("the listing is a context manager (`with os.scandir(...)`): sort where its entries are used")
    _wrap(edits, calls[0], "sorted(", f"{LISTINGS[_called(calls[0])]})")
    return f"{Path(line.file).name}:{line.line}: `{ast.unparse(calls[0])}` listed sorted, not in the directory's order"


def _wrap(edits: Edits, node: ast.expr, opening: str, closing: str) -> None:
    """Put `opening` before the node's source and `closing` after, on its one line."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        raise NoPatch(f"`{ast.unparse(node)}` spans lines: no one-line edit")
    index = node.lineno - 1
    encoded = edits.replaced.get(index, edits.lines[index]).encode("utf-8")  # ast's offsets count bytes
    start, end = node.col_offset, node.end_col_offset
    edits.replaced[index] = (encoded[:start] + opening.encode() + encoded[start:end] + closing.encode()
                             + encoded[end:]).decode("utf-8")


def _iterables(tree: ast.AST, nested: bool = False) -> list[ast.expr]:
    """What each loop and comprehension under `tree` iterates; functions defined in it only when `nested`."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, LOOPS):
            found.append(node.iter)
        stack.extend(c for c in ast.iter_child_nodes(node) if nested or not isinstance(c, FUNCTIONS))
    return found


def _scope(module: ast.Module, at: int) -> ast.AST:
    """The innermost function holding line `at`, else the module."""
    functions = [n for n in ast.walk(module) if isinstance(n, FUNCTIONS)
                 and n.lineno <= at <= (n.end_lineno or n.lineno)]
    return max(functions, key=lambda n: n.lineno, default=module)


def _unwrapped(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRAPPERS \
            and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    return node


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _indent(text: str) -> str:
    return text[:len(text) - len(text.lstrip())]
