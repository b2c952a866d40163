"""The shape of fuzzer/: modules of one idea (at most MAX_LINES lines), stages that take
plain facts (they never import the campaign or the command line), no import cycle, and
packages on floors (docs/architecture.md): none imports one above it or one that imports it.
Read from the source with ast: nothing is imported or run."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "fuzzer"
MAX_LINES = 400
# plan, execute, observe, compare, explain, report, and trace under them: the pipeline's
# stages. The campaign runs them and the CLI drives the campaign, never the other way round.
STAGES = ("fuzzer.plan", "fuzzer.axes", "fuzzer.guided", "fuzzer.memory", "fuzzer.execute", "fuzzer.observe",
          "fuzzer.compare", "fuzzer.explain", "fuzzer.report", "fuzzer.trace", "fuzzer.fix", "fuzzer.replay",
          "fuzzer.bisect")
ABOVE_THE_STAGES = ("fuzzer.campaign", "fuzzer.cli")
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def modules() -> dict[str, Path]:
    """Dotted name → file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, top_level_only: bool) -> set[str]:
    """The package's modules that `name` imports (`from a.b import c`: a.b.c when it is a
    module, else a.b), with the packages they are in, which Python imports first."""
    known = modules()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if top_level_only:  # what runs when the module is imported, TYPE_CHECKING blocks included
        nodes = [n for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 for n in ast.walk(stmt)]
    else:
        nodes = list(ast.walk(tree))
    targets = []
    for node in nodes:
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, path)
            targets += [f"{base}.{alias.name}" for alias in node.names]
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        while target and target != "fuzzer" and target != name and not name.startswith(target + "."):
            found.add(target)
            target = target.rpartition(".")[0]
    return found


def _absolute(node: ast.ImportFrom, name: str, path: Path) -> str:
    if not node.level:
        return node.module or ""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_passes_the_line_limit():
    lengths = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
               for path in modules().values()}
    over = {path: n for path, n in lengths.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them by idea): {over}"


def test_no_stage_imports_the_campaign_or_the_cli():
    wrong = {}
    for name, path in modules().items():
        if name.startswith(STAGES):
            above = {m for m in imported(name, path, top_level_only=False) if m.startswith(ABOVE_THE_STAGES)}
            if above:
                wrong[name] = sorted(above)
    assert not wrong, f"stages must take plain facts, not import what runs them: {wrong}"


def test_no_import_cycle():
    graph = {name: imported(name, path, top_level_only=True) for name, path in modules().items()}
    assert cycles(graph) == []


def test_no_import_climbs_from_inside_a_function():
    """An import written inside a function breaks no cycle at import time, but it still climbs
    back up the pipeline (config reading the explain stage's table, say): counted too. A
    package's own registry (`fuzzer.tools` importing its tools when asked) is no climb."""
    assert cycles(imports_anywhere(modules())) == []


def imports_anywhere(found: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the modules of `found` it imports anywhere, its own submodules aside."""
    return {name: {m for m in imported(name, path, top_level_only=False) if m in found and not m.startswith(name + ".")}
            for name, path in found.items()}


def test_the_checks_see_a_cycle_and_a_stage_importing_the_campaign(tmp_path):
    """The checks above can fail: a two-module circle is found, and so is a stage's import
    of the campaign hidden under TYPE_CHECKING."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    stage = tmp_path / "build.py"
    stage.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fuzzer.campaign import Campaign\n")
    assert "fuzzer.campaign" in imported("fuzzer.report.build", stage, top_level_only=True)
    # an import inside a function, back up to a module that imports this one
    below, above = tmp_path / "config.py", tmp_path / "stabilizers.py"
    below.write_text("def parse():\n    from fuzzer.explain.stabilizers import TABLE\n")
    above.write_text("from fuzzer import config\n")
    assert cycles(imports_anywhere({"fuzzer.config": below, "fuzzer.explain.stabilizers": above})) != []


def package(module: str) -> str:
    """The package a module belongs to: its subpackage of fuzzer, or itself at the top."""
    return ".".join(module.split(".")[:2])


def package_graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """Package → the other packages its modules import anywhere (inside functions too)."""
    graph: dict[str, set[str]] = {}
    for name, targets in imports_anywhere(found).items():
        graph.setdefault(package(name), set()).update(package(t) for t in targets if package(t) != package(name))
    graph.pop("fuzzer", None)  # the package's own __init__, which imports nothing
    return graph


def floors(text: str) -> dict[str, int]:
    """Package → its floor, from the table under the architecture's "Floors" heading."""
    section = text.split("## Floors", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", section, re.M)
    return {f"fuzzer.{name}": int(floor) for floor, names in rows for name in re.findall(r"`([\w.]+)`", names)}


def upward(graph: dict[str, set[str]], floor: dict[str, int]) -> list[tuple[str, str]]:
    """The imports from a package to one on a higher floor."""
    return sorted((a, b) for a, targets in graph.items() for b in targets if floor[b] > floor[a])


def test_every_package_stands_on_a_floor_and_imports_none_above_it():
    graph, floor = package_graph(modules()), floors(ARCHITECTURE.read_text(encoding="utf-8"))
    assert sorted(set(graph) - set(floor)) == [], "add each new package to the Floors table of docs/architecture.md"
    assert sorted(set(floor) - set(graph)) == [], "the Floors table names a package that is not there"
    assert upward(graph, floor) == []
    assert graph["fuzzer.model"] == set(), "the model is the floor: it imports nothing else of fuzzer"


def test_no_packages_import_each_other():
    assert cycles(package_graph(modules())) == []


def reexported(found: dict[str, Path], readers: list[Path]) -> list[str]:
    """`reader: module.name` for each import of a name of fuzzer.model through another
    module that merely imported it (`from fuzzer.plan import Reason`): one way to name each."""
    taken = {name: {alias.asname or alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fuzzer.model")
                    for alias in node.names}
             for name, path in found.items() if not name.startswith("fuzzer.model")}
    wrong = []
    for reader in readers:
        for node in ast.walk(ast.parse(reader.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in taken:
                wrong += [f"{reader.name}: {node.module}.{a.name}" for a in node.names if a.name in taken[node.module]]
    return wrong


def test_the_models_names_are_imported_from_the_model():
    readers = [p for top in ("fuzzer", "tests", "bench") for p in sorted((ROOT / top).rglob("*.py"))]
    assert reexported(modules(), readers) == []


def test_a_name_of_the_model_taken_through_a_stage_is_seen(tmp_path):
    stage, reader = tmp_path / "plan.py", tmp_path / "axes.py"
    stage.write_text("from fuzzer.model import Reason\nSTEP = 1\n")
    reader.write_text("from fuzzer.plan import STEP, Reason\n")
    assert reexported({"fuzzer.plan": stage}, [reader]) == ["axes.py: fuzzer.plan.Reason"]


def test_the_package_checks_see_an_import_up_a_floor_and_a_circle(tmp_path):
    table = "## Floors\n\n| floor | packages |\n|---|---|\n| 1 | `model` |\n| 2 | `axes` `hold` |\n\n## Next\n| 3 | `cli` |\n"
    assert floors(table) == {"fuzzer.model": 1, "fuzzer.axes": 2, "fuzzer.hold": 2}
    low, high = tmp_path / "model.py", tmp_path / "axes.py"
    low.write_text("def f():\n    from fuzzer.axes import AXES\n")  # up a floor, from inside a function
    high.write_text("from fuzzer import model\n")
    graph = package_graph({"fuzzer.model": low, "fuzzer.axes": high})
    assert upward(graph, floors(table)) == [("fuzzer.model", "fuzzer.axes")]
    assert cycles(graph) == [["fuzzer.axes", "fuzzer.model"]]
