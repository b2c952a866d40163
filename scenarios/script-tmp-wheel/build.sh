#!/bin/sh
# pip wheel's shape: the wheel is built under a fresh temporary directory, outside the
# tree, then copied into dist/ by another process, and the temporary directory removed.
set -e
# the interpreter resolved once (a pyenv shim would start ~200 processes per call)
PY=$(python3 -c 'import sys; print(sys.executable)')
work=$(mktemp -d)
"$PY" mkwheel.py src "$work/pkg-1.0-py3-none-any.whl"
mkdir -p dist
"$PY" -c 'import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])' "$work/pkg-1.0-py3-none-any.whl" dist/
rm -rf "$work"
