#!/bin/sh
# mkversion.sh VERSION OUT: the version header, written after a short pause (a slow generator)
set -e
mkdir -p "$(dirname "$2")"
sleep 0.3
printf '#define STAMP_VERSION "%s"\n' "$(cat "$1")" > "$2.tmp"
mv "$2.tmp" "$2"
