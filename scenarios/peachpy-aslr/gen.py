#!/usr/bin/env python3
"""A tiny PeachPy-like assembler: kernel description -> x86-64 assembly.

It reproduces PeachPy's real bug: local labels that the kernel author left
unnamed are collected in a set and numbered (``<function>__localN``) while
iterating that set.  The element hash is ``hash(self.name) ^ id(self)``; with
``name = None`` this is a function of memory addresses only (in Python 3.11
``hash(None)`` is address-based, ``id()`` is the heap address), so the numbering
changes with ASLR.  PYTHONHASHSEED plays no part: no string hash is involved.

Usage: python3 gen.py KERNEL_FILE -o OUTPUT.s
"""
import sys


class Label:
    def __init__(self, name=None):
        self.name = name

    def __hash__(self):
        # PeachPy: hash(self.name) ^ id(self)
        return hash(self.name) ^ id(self)

    def __eq__(self, other):
        return self is other


class Function:
    def __init__(self, name):
        self.name = name
        self.blocks = []            # (label, [instructions]) in program order
        self.unnamed_labels = set()

    def block(self, label_name=None):
        label = Label(label_name)
        if label_name is None:
            self.unnamed_labels.add(label)
        self.blocks.append((label, []))
        return label

    def emit(self, insn):
        self.blocks[-1][1].append(insn)

    def finalize(self):
        # The bug: numbering follows set iteration order.
        for n, label in enumerate(self.unnamed_labels):
            label.name = "%s__local%d" % (self.name, n)

    def assembly(self):
        out = ["\t.text", "\t.globl %s" % self.name,
               "\t.type %s, @function" % self.name, "%s:" % self.name]
        for label, insns in self.blocks:
            out.append("%s:" % label.name)
            out.extend("\t" + i for i in insns)
        out.append("\tret")
        out.append("\t.size %s, .-%s" % (self.name, self.name))
        out.append('\t.section .note.GNU-stack,"",@progbits')
        return "\n".join(out) + "\n"


def parse(path):
    kernel, stages = None, []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if line[0] == "kernel":
                kernel = line[1]
            elif line[0] == "stage":
                stages.append((line[1], int(line[2])))
            else:
                raise SystemExit("%s: bad line %r" % (path, line))
    return kernel, stages


def generate(kernel, stages):
    fn = Function(kernel)
    fn.block("%s_entry" % kernel)
    fn.emit("xorl %eax, %eax")
    for stage, count in stages:
        head = None
        for i in range(count):
            label = fn.block()          # unnamed: PeachPy numbers it later
            head = head or label
            fn.emit("addq $%d, %%rax" % (i + 1))
            fn.emit("imulq $%d, %%rax, %%rax" % (len(stage) + i))
        fn.emit("decq %rdi")
        fn.emit(("jnz", head))          # resolved after numbering
    fn.finalize()
    for _, insns in fn.blocks:
        for j, insn in enumerate(insns):
            if isinstance(insn, tuple):
                insns[j] = "%s %s" % (insn[0], insn[1].name)
    return fn.assembly()


def main(argv):
    if len(argv) != 4 or argv[2] != "-o":
        raise SystemExit("usage: gen.py KERNEL_FILE -o OUTPUT.s")
    kernel, stages = parse(argv[1])
    text = generate(kernel, stages)
    with open(argv[3], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv)
