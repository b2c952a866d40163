#!/usr/bin/env python3
"""Number a tiny VM's virtual registers and emit the program that loads them.

Each register is an object made without an __init__ of its own and given its fields
afterwards. The live registers are collected in a set and numbered in set iteration
order; a register hashes its width and its address together, so the numbering follows
memory addresses (ASLR). (With object's default hash, the address shifted, the order
stayed the same here in 8 builds: consecutive objects keep their relative addresses.) The numbering loop itself takes the
same objects in both runs as far as their values show; the emitter, several calls
later, encodes a register numbered below 4 in a short form: that branch is where two
runs' control flow first parts, not the loop that caused it.
Usage: python3 gen_regs.py program.regs program.s
"""
import sys


class Register:
    __slots__ = ("name", "number", "width")

    def __hash__(self):
        # an allocator's identity hash: the width and the address, mixed
        return hash((self.width, id(self)))


def new_register(name):
    reg = Register()
    reg.name, reg.width = name, 64
    return reg


def collect(names):
    regs, live = [], set()
    for name in names:
        reg = new_register(name)
        regs.append(reg)
        live.add(reg)
    return regs, live


def number(live):
    n = 0
    for reg in live:
        reg.number = n
        n += 1


def short_form(reg):
    return "$%d" % reg.number


def long_form(reg):
    return "$0x%08x" % (reg.number * 0x1000)


def operand(reg):
    return short_form(reg) if reg.number < 4 else long_form(reg)


def instruction(reg):
    return "\tmovq %s, %%rax\t# %s" % (operand(reg), reg.name)


def emit(regs):
    out = ["\t.text", "\t.globl load_registers", "\t.type load_registers, @function", "load_registers:"]
    for reg in regs:
        out.append(instruction(reg))
    out += ["\tret", "\t.size load_registers, .-load_registers", '\t.section .note.GNU-stack,"",@progbits']
    return "\n".join(out) + "\n"


def main(argv):
    with open(argv[1]) as f:
        names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    regs, live = collect(names)
    number(live)
    with open(argv[2], "w") as f:
        f.write(emit(regs))


if __name__ == "__main__":
    main(sys.argv)
