#!/usr/bin/env python3
"""Generate dispatch.c: the command table of a tiny shell.

The command names are deduplicated through a set of strings and emitted in
set iteration order, which follows the (randomised) string hash: the table
order changes with PYTHONHASHSEED.  Addresses play no part, so disabling
ASLR does not help.
Usage: python3 gen_dispatch.py commands.txt dispatch.c
"""
import sys

with open(sys.argv[1]) as f:
    names = {line.strip() for line in f if line.strip() and not line.startswith("#")}

out = ['#include <string.h>', '#include "builtins.h"', ""]
for name in names:
    out.append("static int do_%s(int argc, char **argv) { return builtin_stub(\"%s\", argc, argv); }" % (name, name))
out.append("")
out.append("const struct builtin builtins[] = {")
for name in names:
    out.append('    {"%s", do_%s},' % (name, name))
out.append("    {0, 0}")
out.append("};")
out.append("")
with open(sys.argv[2], "w") as f:
    f.write("\n".join(out))
