#!/usr/bin/env python3
"""Writes the assembly of libfoo.so: one function whose unnamed blocks are numbered
(`blit__localN`) while iterating a set of label objects hashed by their address, as
PeachPy did: the numbering follows memory addresses (ASLR), not the build's schedule."""


class Label:
    def __hash__(self):
        # the page number: ASLR moves it every run. The address within a page (id >> 4
        # alone) repeats between runs, so the set's order repeated often in some
        # environments (9 of 20 runs gave one output)
        return id(self) >> 12


labels = [Label() for _ in range(64)]
unnamed = set(labels)
for n, label in enumerate(unnamed):
    label.name = f"blit__local{n}"

lines = ["\t.text", "\t.globl blit", "\t.type blit, @function", "blit:"]
for i, label in enumerate(labels):
    lines += [f"{label.name}:", f"\taddl ${i}, %eax"]
lines += ["\tret", '\t.section .note.GNU-stack,"",@progbits']
print("\n".join(lines))
