#!/bin/sh
# A script-driven build, the shape of `autoreconf -fi && ./configure && make` run from a
# build script: no make above the configure phase, so the whole phase is one step.
set -e
sh ./configure.sh
gcc -O2 -o eac eac.c
