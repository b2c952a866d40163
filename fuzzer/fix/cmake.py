"""Remedies in a CMake project, written where CMakeLists.txt declares the step: a missing
prerequisite of a custom command joins its `DEPENDS` (spelled as the writer's `OUTPUT`
is), one of a target's compiles gets `add_dependencies(target custom-target)`, and an
intrinsic custom command runs under `${CMAKE_COMMAND} -E env VAR=value`.

The build directory is the configure's `-B DIR` (else `cmake --build DIR`); the steps
name their files under the workspace, made source-relative by the tree.
"""

from __future__ import annotations

import os
import re

from fuzzer.explain.stabilizers import TABLE
from fuzzer.fix import cmakelists
from fuzzer.fix.cmakelists import Call
from fuzzer.fix.patch import Remedy
from fuzzer.fix.stabiliser import UPSTREAM
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit, Hazard

TARGET_OBJECT = re.compile(r"(?:^|/)CMakeFiles/([^/]+)\.dir/")
DECLARATIONS = ("add_executable", "add_library")
WRAPPERS = {"ASLR": "setarch ${CMAKE_HOST_SYSTEM_PROCESSOR} -R"}


def build_dir(tree: Tree) -> str:
    argv = tree.argv
    for i, word in enumerate(argv):
        if word == "-B" and i + 1 < len(argv):
            return os.path.normpath(argv[i + 1])
        if word.startswith("-B") and len(word) > 2:
            return os.path.normpath(word[2:])
    for i, word in enumerate(argv):
        if word == "--build" and i + 1 < len(argv):
            return os.path.normpath(argv[i + 1])
    raise NoPatch("the build command names no CMake build directory (-B DIR or --build DIR)")


def missing_dependency(hazard: Hazard, tree: Tree) -> Remedy:
    """read-before-write: the reader gains the writer's output, as its custom command's
    DEPENDS or, for a target's compile, a dependency on the custom target that makes it."""
    binary = build_dir(tree)
    calls = cmakelists.project_calls(tree.root, binary)
    writer = _making(calls, hazard.file, binary)
    words = tree.words(hazard.reader)
    reader = _custom_command(calls, words, binary)
    if reader is not None:
        return _depends(hazard, tree, reader, writer, binary)
    target = next((m[1] for w in words if (m := TARGET_OBJECT.search(w))), None)
    if target is None:
        raise NoPatch("the reading step is neither a custom command of CMakeLists.txt nor a target's compile")
    return _add_dependencies(hazard, tree, calls, target, writer, binary)


def _making(calls: list[Call], file: str, binary: str) -> Call:
    made = [c for c in calls if c.name == "add_custom_command"
            and file in {cmakelists.expand(a.word, c, binary) for a in c.section("OUTPUT")}]
    if len(made) != 1:
        raise NoPatch(f"no add_custom_command has {file} as its OUTPUT" if not made else
                      f"{len(made)} add_custom_command calls name {file} as their OUTPUT")
    return made[0]


def _custom_command(calls: list[Call], words: list[str], binary: str) -> Call | None:
    """The custom command whose COMMAND line is the step's: each of its words is one of
    the step's (a program as its name or its path)."""
    said = set(words) | {os.path.basename(w) for w in words}

    def runs_it(call: Call) -> bool:
        return any(all(_as_said(a.word, call, binary) in said for a in command[1:]) for command in call.commands())

    found = [c for c in calls if c.name == "add_custom_command" and c.section("OUTPUT") and runs_it(c)]
    if len(found) > 1:
        raise NoPatch(f"{len(found)} custom commands of CMakeLists.txt run the reading step's command line")
    return found[0] if found else None


def _as_said(word: str, call: Call, binary: str) -> str:
    """An argument as the step's command names it: a path source-relative, anything else as written."""
    if "${" not in word and "/" not in word:
        return word
    return cmakelists.expand(word, call, binary, relative_to="source") or word


def _spelled(writer: Call, file: str, reader: Call, binary: str) -> str:
    """How the reader's CMakeLists.txt names the writer's output: the writer's own OUTPUT
    word when both are in one file, else under ${CMAKE_BINARY_DIR}."""
    if writer.file == reader.file:
        return next(a.word for a in writer.section("OUTPUT") if cmakelists.expand(a.word, writer, binary) == file)
    return "${CMAKE_BINARY_DIR}/" + os.path.relpath(file, binary)


def _depends(hazard: Hazard, tree: Tree, reader: Call, writer: Call, binary: str) -> Remedy:
    needed = _spelled(writer, hazard.file, reader, binary)
    listed = reader.section("DEPENDS")
    if hazard.file in {cmakelists.expand(a.word, reader, binary) for a in listed}:
        raise NoPatch(f"the custom command already DEPENDS on {needed}: the race is elsewhere")
    lines = reader.file.read_text(encoding="utf-8").splitlines()
    after = listed[-1] if listed else reader.args[-1]
    changed = cmakelists.inserted_after(lines, after, needed if listed else f"DEPENDS {needed}")
    outputs = " ".join(a.word for a in reader.section("OUTPUT"))
    return tree.edit(hazard.finding_id, f"the custom command for {outputs} DEPENDS on {needed}, which it reads",
                     reader.file, after.line, [changed])


def _add_dependencies(hazard: Hazard, tree: Tree, calls: list[Call], target: str, writer: Call,
                      binary: str) -> Remedy:
    made = {cmakelists.expand(a.word, writer, binary) for a in writer.section("OUTPUT")}
    wrapping = [c.args[0].word for c in calls if c.name == "add_custom_target" and c.args
                and made & {cmakelists.expand(a.word, c, binary) for a in c.section("DEPENDS")}]
    if len(wrapping) != 1:
        raise NoPatch(f"no one add_custom_target DEPENDS on {hazard.file}: list it among {target}'s sources "
                      "(target_sources) so that CMake orders its compiles after it")
    existing = [c for c in calls if c.name == "add_dependencies" and c.words()[:1] == [target]]
    if wrapping[0] in {w for c in existing for w in c.words()[1:]}:
        raise NoPatch(f"{target} already depends on {wrapping[0]}: the race is elsewhere")
    summary = f"{target} is built after {wrapping[0]}, which makes {hazard.file} that it reads"
    if existing:
        call = existing[0]
        lines = call.file.read_text(encoding="utf-8").splitlines()
        return tree.edit(hazard.finding_id, summary, call.file, call.args[-1].line,
                         [cmakelists.inserted_after(lines, call.args[-1], wrapping[0])])
    declared = [c for c in calls if c.name in DECLARATIONS and c.words()[:1] == [target]]
    if len(declared) != 1:
        raise NoPatch(f"cannot tell where CMakeLists.txt declares the target {target}")
    call = declared[0]
    lines = call.file.read_text(encoding="utf-8").splitlines()
    added = f"{cmakelists.indentation(lines[call.first])}add_dependencies({target} {wrapping[0]})"
    return tree.edit(hazard.finding_id, summary, call.file, call.last, [lines[call.last], added])


def stabiliser_env(culprit: Culprit, tree: Tree) -> Remedy:
    """An intrinsic custom command: its COMMAND runs under `${CMAKE_COMMAND} -E env VAR=value`."""
    if not culprit.stabilized_by:
        raise NoPatch("no stabiliser was found for this step")
    binary = build_dir(tree)
    calls = cmakelists.project_calls(tree.root, binary)
    written = {os.path.normpath(o) for o in culprit.outputs}
    making = [c for c in calls if c.name == "add_custom_command"
              and written & {cmakelists.expand(a.word, c, binary) for a in c.section("OUTPUT")}]
    if len(making) != 1:
        raise NoPatch(f"no one add_custom_command has {', '.join(sorted(written))} as its OUTPUT")
    call = making[0]
    commands = call.commands()
    if len(commands) != 1:
        said = set(tree.words(culprit.command))
        commands = [c for c in commands if all(_as_said(a.word, call, binary) in said for a in c[1:])]
    if len(commands) != 1:
        raise NoPatch("cannot tell which COMMAND of the custom command runs the step")
    prefix = _prefix(culprit.stabilized_by)
    keyword = commands[0][0]
    lines = call.file.read_text(encoding="utf-8").splitlines()
    upstream = "; ".join(UPSTREAM[n] for n in culprit.stabilized_by if n in UPSTREAM)
    outputs = " ".join(a.word for a in call.section("OUTPUT"))
    return tree.edit(culprit.finding_id, f"the custom command for {outputs} runs with {prefix} (that step only)",
                     call.file, keyword.line, [cmakelists.inserted_after(lines, keyword, prefix)], upstream)


def _prefix(names: list[str]) -> str:
    env = []
    for name in names:
        if name in WRAPPERS:
            continue
        found = next((v.env for v, _ in TABLE if v.name == name and v.env), None)
        if found is None:
            raise NoPatch(f"{name} has no per-command setting in CMake (a fixed clock is a test, not a fix)")
        env += [f"{key}={value}" for key, value in found]
    words = (["${CMAKE_COMMAND} -E env " + " ".join(env)] if env else []) + \
        [WRAPPERS[n] for n in names if n in WRAPPERS]
    return " ".join(words)
