"""The walk: following one configuration of `buildfuzz run` through the code, as a
newcomer reading how a run goes would.

Read from the source with ast (nothing is imported or run). From `run_campaign`
(fuzzer/campaign/__init__.py), the walk follows the configuration: the `FuzzConfig` and
the `Campaign` that carries it. A call is followed when it hands one of them on (as an
argument, or as the object a method is called on) to a function defined in fuzzer/;
in the callee, the parameter it lands in carries it on (so do names assigned from it,
from `x.config`, or from a function annotated to return one). Calls are followed
depth-first, in the order written, each function expanded once. Plain facts (runs,
manifests, a trace, a path) are not followed: a stage that takes those is read on its
own, not as part of the run's walk.

- A **module** is one .py file under fuzzer/ (a package's `__init__.py` is one).
  `modules` counts the distinct modules the walk enters.
- A **unit** is a stage or layer: a subpackage of fuzzer (`fuzzer.explain`,
  `fuzzer.campaign`, ...) or a top-level module (`fuzzer.memory`).
- A **climb** is a call from one unit into another unit that is already on the call
  chain: back up to a layer this call was reached from (an explain module calling the
  campaign's methods, say). Each call site counts once.
- A **return** is a call into a module entered before and no longer on the chain;
  printed, not bounded.

`PYTHONPATH=.:tests python tests/quick/test_walk.py` prints the walk: the counts, the
modules in the order entered, the climbs, and every call between modules as followed.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "fuzzer"
START = ("fuzzer.campaign", "run_campaign")
CARRIERS = {("fuzzer.config", "FuzzConfig"), ("fuzzer.campaign.state", "Campaign")}
MAX_MODULES = 15
MAX_CLIMBS = 8

Where = tuple[str, str]  # (module, "function" or "Class.method")


@dataclass
class Module:
    name: str
    functions: dict[str, ast.AST] = field(default_factory=dict)
    classes: dict[str, list[str]] = field(default_factory=dict)  # class → its methods
    imported: dict[str, Where] = field(default_factory=dict)  # local name → (module, name there)
    modules: dict[str, str] = field(default_factory=dict)  # local name → an imported fuzzer module


def load() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = _module(".".join(parts), path)
    for module in found.values():  # `from fuzzer.x import y`: y is a module, or a name in x
        for local, (source, name) in list(module.imported.items()):
            if f"{source}.{name}" in found:
                del module.imported[local]
                module.modules[local] = f"{source}.{name}"
    return found


def _module(name: str, path: Path) -> Module:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = Module(name)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]) if node.level \
                else node.module or ""
            if base.startswith("fuzzer"):
                for alias in node.names:
                    module.imported[alias.asname or alias.name] = (base.rstrip("."), alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fuzzer"):
                    module.modules[alias.asname or alias.name] = alias.name
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            module.classes[node.name] = [m.name for m in methods]
            module.functions.update({f"{node.name}.{m.name}": m for m in methods})
    return module


def unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


class Walk:
    def __init__(self, modules: dict[str, Module]):
        self.modules = modules
        self.expanded: set[Where] = set()
        self.entered: list[str] = []
        self.climbs: list[str] = []
        self.returns: list[str] = []
        self.path: list[str] = []

    def resolve(self, module: str, name: str, seen: tuple = ()) -> Where | None:
        """A name as seen from `module`, followed through re-exports to where it is defined."""
        m = self.modules.get(module)
        if m is None or (module, name) in seen:
            return None
        if name in m.functions or name in m.classes:
            return module, name
        if name in m.imported:
            return self.resolve(*m.imported[name], seen=(*seen, (module, name)))
        return None

    def _type(self, module: str, annotation) -> Where | None:
        """The carrier an annotation names, if it names one."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            annotation = ast.parse(annotation.value, mode="eval").body
        if isinstance(annotation, ast.BinOp):  # `Campaign | None`
            return self._type(module, annotation.left) or self._type(module, annotation.right)
        if isinstance(annotation, ast.Name):
            target = self.resolve(module, annotation.id)
            return target if target in CARRIERS else None
        return None

    def _carried(self, module: str, node, carrying: dict[str, Where]) -> Where | None:
        """The carrier an expression is, if it is one."""
        if isinstance(node, ast.Name):
            return carrying.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "config" and self._carried(module, node.value, carrying):
            return "fuzzer.config", "FuzzConfig"
        if isinstance(node, ast.Call):
            target = self._target(module, node.func, carrying)
            if target is not None and target[1] in self.modules[target[0]].functions:
                return self._type(target[0], self.modules[target[0]].functions[target[1]].returns)
        return None

    def _target(self, module: str, func, carrying: dict[str, Where]) -> Where | None:
        if isinstance(func, ast.Name):
            return self.resolve(module, func.id)
        if not isinstance(func, ast.Attribute):
            return None
        if isinstance(func.value, ast.Name) and func.value.id in self.modules[module].modules:
            return self.resolve(self.modules[module].modules[func.value.id], func.attr)
        carrier = self._carried(module, func.value, carrying)
        if carrier is not None and f"{carrier[1]}.{func.attr}" in self.modules[carrier[0]].functions:
            return carrier[0], f"{carrier[1]}.{func.attr}"
        return None

    def _carrying(self, module: str, qualname: str, node, given: dict[str, Where]) -> dict[str, Where]:
        """The names in a function that carry the configuration: parameters given it or
        annotated with it, `self` in a carrier's methods, names assigned from them."""
        carrying = dict(given)
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        for arg in args:
            annotated = self._type(module, arg.annotation)
            if annotated:
                carrying[arg.arg] = annotated
        if "." in qualname and (module, qualname.split(".")[0]) in CARRIERS and args:
            carrying[args[0].arg] = (module, qualname.split(".")[0])
        changed = True
        while changed:
            changed = False
            for assign in (n for n in ast.walk(node) if isinstance(n, (ast.Assign, ast.NamedExpr))):
                targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
                pairs = [(t, assign.value) for t in targets]
                pairs += [(t, v) for t in targets if isinstance(t, ast.Tuple) and isinstance(assign.value, ast.Tuple)
                          for t, v in zip(t.elts, assign.value.elts)]  # `a, b = x.config, y`
                for target, value in pairs:
                    carrier = self._carried(module, value, carrying)
                    if carrier and isinstance(target, ast.Name) and target.id not in carrying:
                        carrying[target.id] = carrier
                        changed = True
        return carrying

    def calls(self, module: str, qualname: str, given: dict[str, Where]) -> list[tuple[Where, dict[str, Where]]]:
        """The calls that hand the configuration on: (callee, what its parameters carry)."""
        node = self.modules[module].functions[qualname]
        carrying = self._carrying(module, qualname, node, given)
        found = []
        for call in sorted((n for n in ast.walk(node) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)):
            target = self._target(module, call.func, carrying)
            if target is None:
                continue
            receiver = self._carried(module, call.func.value, carrying) if isinstance(call.func, ast.Attribute) else None
            handed = any(self._carried(module, arg, carrying) for arg in [*call.args, *(k.value for k in call.keywords)])
            callee_module, name = target
            classes = self.modules[callee_module].classes
            callees = [f"{name}.{m}" for m in ("__init__", "__post_init__") if m in classes[name]] \
                if name in classes else [name]
            for callee in callees:
                params = self._given(self.modules[callee_module].functions[callee], call, carrying, module,
                                     bound=receiver is not None or callee != name)
                if receiver is not None or handed:
                    found.append(((callee_module, callee), params))
        return found

    def _given(self, node, call: ast.Call, carrying, module, bound: bool) -> dict[str, Where]:
        params = [a.arg for a in node.args.posonlyargs + node.args.args][1 if bound else 0:]
        given = {}
        for param, arg in zip(params, call.args):
            carrier = self._carried(module, arg, carrying)
            if carrier:
                given[param] = carrier
        for keyword in call.keywords:
            carrier = self._carried(module, keyword.value, carrying) if keyword.arg else None
            if carrier:
                given[keyword.arg] = carrier
        return given

    def walk(self, where: Where, given: dict[str, Where], chain: list[str]) -> None:
        module, qualname = where
        self.expanded.add(where)
        if module not in self.entered:
            self.entered.append(module)
        for target, params in self.calls(module, qualname, given):
            target_module = target[0]
            if target_module != module:
                call = f"{module}.{qualname} → {target_module}.{target[1]}"
                self.path.append("  " * (len(chain) - 1) + call)
                if unit(target_module) != unit(module) and unit(target_module) in map(unit, chain):
                    self.climbs.append(call)
                elif target_module in self.entered and target_module not in chain:
                    self.returns.append(call)
            if target not in self.expanded:
                self.walk(target, params, chain if target_module == module else [*chain, target_module])


@functools.cache
def measured() -> Walk:
    walk = Walk(load())
    start = walk.resolve(*START)
    walk.walk(start, {}, [start[0]])
    return walk


def report(walk: Walk) -> str:
    return "\n".join([f"{len(walk.entered)} modules, {len(walk.climbs)} climbs, {len(walk.returns)} returns",
                      "modules, in the order entered:", *("  " + m for m in walk.entered),
                      "climbs:", *("  " + c for c in walk.climbs),
                      "calls between modules, as followed:", *walk.path])


def test_the_run_is_followed_through_few_modules_in_pipeline_order():
    walk = measured()
    assert len(walk.entered) <= MAX_MODULES and len(walk.climbs) <= MAX_CLIMBS, report(walk)


def test_the_walk_follows_what_carries_the_configuration():
    """The measure is worth something only if it sees the ways the configuration is handed on."""
    calls = "\n".join(measured().path)
    assert "fuzzer.campaign.run_campaign → fuzzer.config.validate" in calls  # an imported name
    assert "fuzzer.campaign.run_campaign → fuzzer.campaign.resume.open_campaign" in calls  # a name assigned from one
    assert "→ fuzzer.campaign.state.Campaign.__post_init__" in calls  # a constructor given the config


if __name__ == "__main__":
    print(report(measured()))
