#!/bin/sh
# Write registry.c: a table of every plugin descriptor (*.plugin) present.
# The bug is in the Makefile: registry.c does not depend on the *.plugin
# files, so under -j this scan can run before (some of) them exist.
# Usage: sh gen_registry.sh registry.c
set -e
n=0
{
    echo '#include "registry.h"'
    echo
    echo 'const struct plugin plugins[] = {'
    for f in *.plugin; do
        [ -e "$f" ] || continue
        read -r name magic < "$f"
        echo "    {\"$name\", $magic},"
        n=$((n + 1))
    done
    echo '    {0, 0}'
    echo '};'
    echo "const int n_plugins = $n;"
} > "$1"
