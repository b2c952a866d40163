#!/usr/bin/env python3
"""Writes foo.map (the path given): 64 labels numbered while iterating a set of label objects hashed by
their address, as PeachPy numbered its local labels: the numbering follows memory
addresses (ASLR), not the build's schedule."""

import sys


class Label:
    def __hash__(self):
        # the page number: ASLR moves it every run. The address within a page (id >> 4
        # alone) repeats between runs, so the set's order repeated often in some
        # environments (9 of 20 runs gave one output)
        return id(self) >> 12


labels = [Label() for _ in range(64)]
for n, label in enumerate(set(labels)):
    label.name = f"blit__local{n}"
with open(sys.argv[1], "w") as out:
    out.write("".join(f"{i} {label.name}\n" for i, label in enumerate(labels)))
