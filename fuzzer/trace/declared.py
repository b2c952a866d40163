"""The build's declared graph: does it order step A before step B?

Two steps touching one file are normal build behaviour when the build declares their
order: `main.o: main.c opcodes.h` puts every compile of main.c after the recipe that
makes opcodes.h, whatever the schedule. Such a pair is never a hazard, even when the
traces alone cannot tell (one trace, or the same order in every trace).

The graph comes from make's database (`make -pn` in the built tree, with the build's own
make arguments, `fuzzer.tools.make`): every target, its prerequisites (normal and
order-only) and whether it has a recipe, in every directory a dry sub-make visited; or
from ninja's (`ninja -t graph`, `fuzzer.tools.ninja`: explicit, implicit and order-only
inputs; headers found through depfiles are not in it, so fewer steps are ordered; the
line of each target's `build` statement is read from its build file). A
step builds the targets with a recipe among the files it wrote (or directories it
created). Without a graph (a build that is not one make or ninja call or `cmake --build`
of a Ninja build directory, the tool missing, a recursive build whose sub-makes do not
print) nothing is declared, and hazards rest on the traces alone.

A step that wrote several targets (one recipe for several files, or a generator whose
side outputs are targets of their own) was launched for one of them, but the trace
does not say which. So A is ordered before B only when every target A wrote is upstream
of every target B wrote: a claim that holds whichever one make was building.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from fuzzer.tools import make, ninja
from fuzzer.trace.steps import BuildTrace, Step

# `make -pn -w` prints these as comments of its database (`# make[1]: Entering directory '/x/lib'`)
DIRECTORY = re.compile(r"^(?:# )?\S*make(?:\[\d+\])?: (Entering|Leaving) directory '(.*)'$")
DOT_NODE = re.compile(r'^"(\w+)" \[label="((?:[^"\\]|\\.)*)"(, shape=ellipse)?\]$')
DOT_EDGE = re.compile(r'^"(\w+)" -> "(\w+)"(?: \[(.*)\])?$')
RULE = re.compile(r"^([^\s#:][^:]*?)\s*::?(?!=)\s*(.*)$")
ASSIGNMENT = re.compile(r"^\S+\s*(?::::|::|:|\+|\?|!)?=")


@dataclass(frozen=True)
class DeclaredGraph:
    """Targets (workspace-relative) → their direct prerequisites; which have a recipe."""

    prerequisites: Mapping[str, frozenset[str]]
    made: frozenset[str]  # targets with a recipe: the ones a step can be building
    source: str  # where the graph came from, for evidence
    recipes: Mapping[str, tuple[str, int]] = field(default_factory=dict)  # target → (makefile, recipe's line)
    statements: Mapping[str, str] = field(default_factory=dict)  # target → `build.ninja:LINE` of its statement
    _upstream: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def orders(self, a: Step, b: Step) -> bool:
        """Whether the declared graph puts one of the two steps before the other."""
        ta, tb = self.targets(a), self.targets(b)
        if not ta or not tb:
            return False
        return self._all_upstream(ta, tb) or self._all_upstream(tb, ta)

    def targets(self, step: Step) -> frozenset[str]:
        return frozenset(p for p in (*step.writes, *step.mkdirs) if p in self.made)

    def rule_of(self, target: str, tree: str) -> str:
        """`Makefile:22`: the rule line of `target`'s recipe in the user's file (make's database
        says where the recipe is; the rule is the logical line above it); `build.ninja:7`: the
        line of the `build` statement that writes it; or "" unknown."""
        if target in self.statements:
            return self.statements[target]
        at = self.recipes.get(target)
        if at is None:
            return ""
        found = make.located(target, Path(tree) / at[0], at[1] - 1)
        return f"{at[0]}:{found.rule[0] + 1}" if found else ""

    def _all_upstream(self, earlier: Iterable[str], later: Iterable[str]) -> bool:
        return all(x in self.upstream(y) for x in earlier for y in later)

    def upstream(self, target: str) -> frozenset[str]:
        """Everything `target` needs, transitively (iteratively: chains can be long)."""
        known = self._upstream.get(target)
        if known is not None:
            return known
        seen: set[str] = set()
        stack = list(self.prerequisites.get(target, ()))
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(self.prerequisites.get(node, ()))
        self._upstream[target] = frozenset(seen)
        return self._upstream[target]


def declared_graph(build_command: str, tree: str, trace: BuildTrace | None = None) -> DeclaredGraph | None:
    """The declared graph of a build that is one make or ninja call (or `cmake --build` of
    a Ninja build directory), or that runs make below a wrapper (`./configure && make`, a
    script) as its `trace` shows, read in its built tree; None where none can be printed."""
    return from_make(build_command, tree) or from_traced_makes(trace, tree) or from_ninja(build_command, tree)


def from_make(build_command: str, tree: str) -> DeclaredGraph | None:
    """make's declared graph for a build that is one make call, read in its built tree;
    None where it cannot be printed."""
    arguments = make.make_arguments(build_command.replace("{jobs}", "1").split())
    if arguments is None or not os.path.isfile(os.path.join(tree, "Makefile")) and not _makefile_named(arguments):
        return None
    text = make.database(arguments, tree)
    return parse_database(text, tree) if text is not None else None


def from_traced_makes(trace: BuildTrace | None, tree: str) -> DeclaredGraph | None:
    """make's declared graph of a build whose makes ran below a wrapper: the database of each
    make the trace saw that no other make ran (a sub-make's database is its parent's to print),
    read as it ran (its arguments, its directory, its environment), all of them merged."""
    if trace is None:
        return None
    graphs = [graph for arguments, cwd, env in _top_makes(trace, tree)
              if (text := make.database(arguments, cwd, env)) is not None
              and (graph := parse_database(text, tree)) is not None]
    return merged(graphs)


def _top_makes(trace: BuildTrace, tree: str) -> list[tuple[list[str], str, dict[str, str]]]:
    """(arguments, directory in `tree`, environment) of each distinct make call with no make
    above it, in the workspace, in start order."""
    calls: dict[tuple[tuple[str, ...], str], dict[str, str]] = {}
    for proc in trace.processes:
        argv = next((a for a in proc.execs if a and os.path.basename(a[0]) in make.NAMES), None)
        relative = os.path.relpath(proc.cwd, trace.workspace) if os.path.isabs(proc.cwd) else proc.cwd
        if argv is None or relative.startswith("..") or _below_make(trace, proc.index):
            continue
        arguments = make.make_arguments(list(argv))
        if arguments is not None:
            env = dict(v.split("=", 1) for v in proc.env or () if "=" in v)
            calls.setdefault((tuple(arguments), os.path.normpath(os.path.join(tree, relative))), _own(env))
    return [(list(arguments), cwd, env) for (arguments, cwd), env in calls.items()]


def _below_make(trace: BuildTrace, index: int) -> bool:
    parent = trace.processes[index].parent
    while parent is not None:
        if any(a and os.path.basename(a[0]) in make.NAMES for a in trace.processes[parent].execs):
            return True
        parent = trace.processes[parent].parent
    return False


def _own(env: dict[str, str]) -> dict[str, str]:
    """The build's environment without what buildfuzz put in it (its preloaded libraries)."""
    return {k: v for k, v in env.items() if k != "LD_PRELOAD" and not k.startswith("BUILDFUZZ_")}


def merged(graphs: list[DeclaredGraph]) -> DeclaredGraph | None:
    """One graph of several makes' databases (one make per directory, or two calls of one)."""
    if len(graphs) <= 1:
        return graphs[0] if graphs else None
    prerequisites: dict[str, frozenset[str]] = {}
    recipes: dict[str, tuple[str, int]] = {}
    for graph in graphs:
        for target, needed in graph.prerequisites.items():
            prerequisites[target] = prerequisites.get(target, frozenset()) | needed
        recipes.update(graph.recipes)
    made = frozenset().union(*(g.made for g in graphs))
    return DeclaredGraph(prerequisites, made, f"{len(graphs)} make databases", recipes)


def _makefile_named(arguments: list[str]) -> bool:
    return any(a in ("-f", "--file") or a.startswith(("-f", "--file=", "--makefile=")) for a in arguments)


def parse_database(text: str, tree: str) -> DeclaredGraph | None:
    """The "# Files" sections of every database in `make -pn -w` output, each read in the
    directory make said it entered."""
    root = os.path.normpath(os.path.abspath(tree))
    directories = [root]
    prerequisites: dict[str, set[str]] = {}
    made: set[str] = set()
    recipes: dict[str, tuple[str, int]] = {}
    in_files, target, not_target = False, None, False
    for line in text.splitlines():
        where = DIRECTORY.match(line)
        if where:
            _enter_or_leave(directories, where[1], where[2])
        elif line.startswith("# Files"):
            in_files, target = True, None
        elif line.startswith(("# files hash-table stats", "# Finished Make data base")):
            in_files, target = False, None
        elif not in_files:
            continue
        elif line.startswith("# Not a target:"):
            not_target = True
        elif target is not None and (at := make.RECIPE_FROM.match(line)):
            file = _relative(at["file"], directories[-1], root)
            if file is not None:
                recipes[target] = (file, int(at["line"]))
        elif line.startswith("\t"):
            if target is not None:
                made.add(target)
        elif not line.strip():
            target, not_target = None, False
        elif not line.startswith("#"):
            target = _rule(line, directories[-1], root, prerequisites, not_target)
    if not prerequisites:
        return None
    return DeclaredGraph({t: frozenset(p) for t, p in prerequisites.items()}, frozenset(made), "make's database",
                         recipes)


def _enter_or_leave(directories: list[str], how: str, path: str) -> None:
    if how == "Entering":
        directories.append(os.path.normpath(path))
    elif len(directories) > 1:
        directories.pop()


def _rule(line: str, directory: str, root: str, prerequisites: dict[str, set[str]], not_target: bool) -> str | None:
    """Record one `target: prerequisites | order-only` line; the target, if it is one."""
    m = RULE.match(line)
    if m is None or ASSIGNMENT.match(line) or "%" in m[1] or not_target:
        return None
    target = _relative(m[1], directory, root)
    if target is None:
        return None
    needed = prerequisites.setdefault(target, set())
    for word in m[2].replace("|", " ").split():
        path = _relative(word, directory, root)
        if path is not None:
            needed.add(path)
    return target


def _relative(name: str, directory: str, root: str) -> str | None:
    """A make file name → workspace-relative (None: outside the tree, or not a file name)."""
    if not name or "$" in name:
        return None
    path = os.path.normpath(os.path.join(directory, name))
    if path == root:
        return "."
    return path[len(root) + 1:] if path.startswith(root + "/") else None


def from_ninja(build_command: str, tree: str) -> DeclaredGraph | None:
    """ninja's graph of a build that is one ninja call, or that builds a CMake project's
    Ninja build directory with `cmake --build DIR`."""
    words = build_command.replace("{jobs}", "1").split()
    arguments = ninja.graph_arguments(words)
    if arguments is None:
        arguments = _cmake_build(words, tree)
    if arguments is None:
        return None
    text = ninja.graph(arguments, tree)
    graph = parse_graph(text, os.path.join(tree, ninja.directory(arguments)), tree) if text is not None else None
    return replace(graph, statements=statement_lines(arguments, tree)) if graph is not None else None


def _cmake_build(words: list[str], tree: str) -> list[str] | None:
    """ninja's `-C DIR` for `cmake --build DIR` where DIR holds a build.ninja (CMake's Ninja generator)."""
    at = next((i for i, w in enumerate(words[1:-1], 1) if w == "--build" and os.path.basename(words[i - 1]) == "cmake"),
              None)
    if at is None or not os.path.isfile(os.path.join(tree, words[at + 1], "build.ninja")):
        return None
    return ["-C", words[at + 1]]


def statement_lines(arguments: list[str], tree: str) -> dict[str, str]:
    """Each target a `build` statement names literally → `build.ninja:LINE`, both relative
    to the tree (ninja's own paths are relative to its `-C` directory)."""
    root = os.path.normpath(os.path.abspath(tree))
    where = os.path.normpath(os.path.join(root, ninja.directory(arguments)))
    lines = {}
    for output, (file, line) in ninja.statement_lines(arguments, tree).items():
        target, path = _relative(output, where, root), _relative(file, where, root)
        if target is not None and path is not None:
            lines[target] = f"{path}:{line}"
    return lines


def parse_graph(text: str, directory: str, tree: str) -> DeclaredGraph | None:
    """`ninja -t graph` dot: file nodes, rule nodes (ellipses) between a build's inputs
    and outputs, or one labelled edge for a build with one input and one output."""
    root = os.path.normpath(os.path.abspath(tree))
    directory = os.path.normpath(os.path.abspath(directory))
    names: dict[str, str] = {}
    rules: dict[str, str] = {}  # rule node → its rule's name
    edges: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        if m := DOT_NODE.match(line):
            (rules if m[3] else names)[m[1]] = m[2].replace('\\"', '"')
        elif m := DOT_EDGE.match(line):
            edges.append((m[1], m[2], m[3] or ""))
    inputs: dict[str, list[str]] = {}  # rule node → input file nodes
    prerequisites: dict[str, set[str]] = {}
    made: set[str] = set()
    for source, target, attributes in edges:
        if target in rules:
            inputs.setdefault(target, []).append(source)
    for source, target, attributes in edges:
        if source in rules:
            needed, rule = inputs.get(source, []), rules[source]
        elif target in names and source in names:
            needed, rule = [source], attributes.partition('label="')[2].strip(' "')
        else:
            continue
        if target not in names:
            continue  # a node ninja's graph tool never labels (a CMake phony edge's second output)
        output = _relative(names[target], directory, root)
        if output is None:
            continue
        prerequisites.setdefault(output, set()).update(
            p for p in (_relative(names[n], directory, root) for n in needed if n in names) if p is not None)
        if rule != "phony":
            made.add(output)
    if not prerequisites:
        return None
    return DeclaredGraph({t: frozenset(p) for t, p in prerequisites.items()}, frozenset(made), "ninja's graph")
