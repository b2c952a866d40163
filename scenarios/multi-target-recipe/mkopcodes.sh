#!/bin/sh
# mkopcodes.sh OPCODES.DEF: write opcodes.h, optable.inc and opnames.inc.
# Each output is started with `>` and then grown one line per opcode with
# `>>`, the way many hand-written generator scripts do it.
def=$1

# Refuse duplicate opcode names before writing anything.
dups=$(sed -e '/^#/d' -e '/^$/d' -e 's/ .*//' "$def" | sort | uniq -d)
if [ -n "$dups" ]; then
    echo "mkopcodes.sh: duplicate opcodes in $def:" $dups >&2
    exit 1
fi

for f in opcodes.h optable.inc opnames.inc; do
    echo "/* $f: generated from $def by mkopcodes.sh, do not edit */" > $f
done
echo "#pragma once" >> opcodes.h
n=0
while read name arity; do
    case $name in ''|'#'*) continue ;; esac
    echo "#define OP_$name $n" >> opcodes.h
    echo "OP($name, $arity)" >> optable.inc
    lower=$(echo "$name" | tr A-Z a-z)       # the disassembler prints lower case
    echo "\"$lower\"," >> opnames.inc
    n=$((n + 1))
done < "$def"
echo "#define OP_COUNT_DECLARED $n" >> opcodes.h
