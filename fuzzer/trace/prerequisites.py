"""Missing prerequisites: a file one step generates that another needs, with no edge between
them in the build's declared graph (`fuzzer.trace.declared`).

Two steps that never ran at the same time (a serial build under `make --shuffle`) give
the traces no overlap and, when the reader fails before the writer runs, no second order
either. The declared graph closes the gap: in the reference the writer made the file and
the reader read it; in another traced run the reader looked for it before it existed;
and the graph, which names both steps' targets, has no path from the one to the other.
That is the missing edge itself, not a guess from timing.

Every read-before-write or mkdir hazard then names the edge the graph lacks (`bpf.o:
config.h`, `obj/x.o: | obj`) and the line of the rule that lacks it, when make's
database says where that rule is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from msgspec import structs

from fuzzer.model import Culprit, Hazard
from fuzzer.trace.declared import DeclaredGraph
from fuzzer.trace.differences import in_workspace
from fuzzer.trace.hazards import MKDIR_RACE, READ_BEFORE_WRITE
from fuzzer.trace.steps import BuildTrace, Step


def declared_hazards(found: Iterable[Hazard], graph: DeclaredGraph | None, reference: BuildTrace,
                     reference_label: str, others: Iterable[tuple[str, BuildTrace]], tree: str) -> tuple[Hazard, ...]:
    """The traces' hazards, then those only the declared graph shows in each of the `others`
    (label, trace) against the reference, each with the edge the graph lacks."""
    hazards = list(found)
    for label, trace in others:
        known = {f for h in hazards for f in (h.files or [h.file])}
        hazards += missed_generated(reference, reference_label, trace, label, graph, known)
    return with_missing_edges(hazards, reference, graph, tree)


def missed_generated(reference: BuildTrace, reference_label: str, other: BuildTrace, label: str,
                     graph: DeclaredGraph | None, known: Iterable[str] = ()) -> list[Hazard]:
    """Hazards the traces alone cannot show: a step of `other` found a file missing that a
    step of `reference` wrote and the same step read after it there, the declared graph
    naming both steps' targets and ordering neither after the other. `known`: files that
    already have a hazard (one per file)."""
    if graph is None:
        return []
    found: dict[str, Hazard] = {}
    skip = set(known)
    for step in other.steps:
        for path, probe in sorted(step.probes.items()):
            if probe.found or path in skip or path in found or not in_workspace(path):
                continue
            pair = _unordered_pair(reference, step, path, graph)
            if pair is not None:
                found[path] = _hazard(path, *pair, step, reference, reference_label, other, label, graph)
    return list(found.values())


def _unordered_pair(reference: BuildTrace, step: Step, path: str, graph: DeclaredGraph) -> tuple[Step, Step] | None:
    """(writer, reader) in the reference: a step other than the reader wrote `path` before
    the reader looked at it and found it; both build targets the graph knows, unordered."""
    reader = reference.step(step.key)
    if reader is None or reader.found(path) is not True:
        return None
    look = reader.first_look(path)
    writer = next((w for w in reference.writers(path) if w is not reader and look is not None and w.end <= look), None)
    if writer is None or not graph.targets(writer) or not graph.targets(reader) or graph.orders(writer, reader):
        return None
    return writer, reader


def _hazard(path: str, writer: Step, reader: Step, missed: Step, reference: BuildTrace, reference_label: str,
            other: BuildTrace, label: str, graph: DeclaredGraph) -> Hazard:
    look = missed.first_look(path) or other.start
    return Hazard(
        READ_BEFORE_WRITE, path, reader=reader.command, writer=writer.command,
        detail=(f"{label}: `{missed.command}` looked for {path} at +{look - other.start:.3f}s and it was not there; "
                f"in the {reference_label} `{writer.command}` wrote it before `{reader.command}` read it"),
        evidence=(f"not ordered: {graph.source} has no path from {_names(graph.targets(writer))} to "
                  f"{_names(graph.targets(reader))}, and in the {label} the reader ran before {path} existed"),
        steps=sorted({reader.command, writer.command}), files=[path], traced=[reference_label, label])


def with_missing_edges(hazards: Iterable[Hazard], reference: BuildTrace, graph: DeclaredGraph | None,
                       tree: str) -> tuple[Hazard, ...]:
    """Each read-before-write or mkdir hazard with the prerequisite the graph lacks (the
    reader's target gains the file, or the directory as an order-only one) and the line
    of the reader's rule; the others as they are."""
    return tuple(_with_edge(h, reference, graph, tree) if graph is not None else h for h in hazards)


def _with_edge(hazard: Hazard, reference: BuildTrace, graph: DeclaredGraph, tree: str) -> Hazard:
    if hazard.type not in (READ_BEFORE_WRITE, MKDIR_RACE) or hazard.missing_edge:
        return hazard
    reader = next((s for s in reference.steps if s.command == hazard.reader), None)
    targets = sorted(graph.targets(reader)) if reader is not None else []
    needed = hazard.file.rstrip("/")
    if not targets or any(needed in graph.upstream(t) for t in targets):
        return hazard  # the graph does declare it (the race is elsewhere), or names no target of the step
    lacking = _lacking(reference, hazard, needed, graph)  # every step missing the same edge, of every rule
    others = sorted({t for s in lacking for t in graph.targets(s)} - set(targets[:1]))
    named = " ".join([targets[0], *others])
    edge = f"{named}: | {needed}" if hazard.type == MKDIR_RACE else f"{named}: {needed}"
    rules = list(dict.fromkeys(r for r in (graph.rule_of(t, tree) for t in [targets[0], *others]) if r))
    return structs.replace(hazard, missing_edge=edge, rule=graph.rule_of(targets[0], tree), rules=rules,
                           steps=sorted({*hazard.steps, *(s.command for s in lacking)}))


def _lacking(reference: BuildTrace, hazard: Hazard, needed: str, graph: DeclaredGraph) -> list[Step]:
    """The steps of the reference that need `needed` (write into the directory, or read the
    file, without making it themselves), whose targets the graph knows and does not order
    after it, and that need no other such step first: each lacks the same edge, and with it
    the steps after them would wait too (a tool's link, not every file the tool writes)."""
    def needs(step: Step) -> bool:
        if hazard.type == MKDIR_RACE:
            return (step.first_look(needed) is None and needed not in step.mkdirs
                    and any(os.path.dirname(p) == needed for p in step.writes))
        return needed in step.inputs and needed not in step.writes
    lacking = {s.id: graph.targets(s) for s in reference.steps
               if needs(s) and graph.targets(s) and not any(needed in graph.upstream(t) for t in graph.targets(s))}
    lacking_targets = frozenset().union(*lacking.values())
    return [s for s in reference.steps if s.id in lacking
            and not any((lacking_targets - lacking[s.id]) & graph.upstream(t) for t in lacking[s.id])]


def with_rules(culprits: Iterable[Culprit], reference: BuildTrace, graph: DeclaredGraph | None,
               tree: str) -> tuple[Culprit, ...]:
    """Each culprit with the line of the rule that ran its step (`Makefile:22`), when make's
    database says where the recipe of every target the step wrote is and they share one rule;
    "" otherwise: a line is read from the database, never guessed."""
    if graph is None:
        return tuple(culprits)
    return tuple(c if c.rule else structs.replace(c, rule=_rule_of(c.command, reference, graph, tree))
                 for c in culprits)


def _rule_of(command: str, reference: BuildTrace, graph: DeclaredGraph, tree: str) -> str:
    step = next((s for s in reference.steps if s.command == command), None)
    rules = {graph.rule_of(t, tree) for t in graph.targets(step)} if step is not None else set()
    return rules.pop() if len(rules) == 1 else ""


def _names(targets: Iterable[str]) -> str:
    return ", ".join(sorted(targets)) or "nothing"
