#!/usr/bin/env python3
"""Writes this scenario's CMakeLists.txt: COUNT generator steps chained by DEPENDS (each
reads the one before), compiled into libkernels.a, as NNPACK's CMake build chains its
PeachPy kernels.

    python3 make_project.py [COUNT]      (default 8, the shipped size; the seed's is ~30)

Step i's mode (see gen.py): the second to last is `joint`; otherwise i % 3 == 1 is
`aslr`, i % 3 == 2 is `seed`, and the rest are `stable`.
"""
import sys
from pathlib import Path


def mode(i: int, count: int) -> str:
    if i == count - 2:
        return "joint"
    return {1: "aslr", 2: "seed"}.get(i % 3, "stable")


def cmakelists(count: int, modes: list[str] | None = None, seconds: list[float] | None = None) -> str:
    """`modes`, `seconds`: each step's (default: `mode`, and no CPU time spent first)."""
    modes = modes or [mode(i, count) for i in range(count)]
    lines = ["cmake_minimum_required(VERSION 3.13)", "project(kernels C)", ""]
    for i in range(count):
        previous = f" ${{CMAKE_CURRENT_BINARY_DIR}}/k{i - 1}.c" if i else ""
        spend = f" --seconds={seconds[i]:g}" if seconds else ""
        lines += [
            f"add_custom_command(OUTPUT k{i}.c",
            f"  COMMAND python3 ${{CMAKE_CURRENT_SOURCE_DIR}}/gen.py {modes[i]} k{i} k{i}.c{previous}{spend}",
            f"  DEPENDS ${{CMAKE_CURRENT_SOURCE_DIR}}/gen.py{previous})",
        ]
    sources = " ".join(f"${{CMAKE_CURRENT_BINARY_DIR}}/k{i}.c" for i in range(count))
    lines += ["", f"add_library(kernels STATIC {sources})", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    (Path(__file__).parent / "CMakeLists.txt").write_text(cmakelists(count))
