#!/bin/sh
# Turn a plugin description into a plugin descriptor file (NAME.plugin).
# Simulates a code generator that takes `cost` seconds.  The result is written
# to a temporary name and moved into place, so readers never see half a file.
# Usage: sh mkplugin.sh plugins/NAME.def NAME.plugin
set -e
while read -r key value; do
    case $key in
        name) name=$value ;;
        cost) cost=$value ;;
        magic) magic=$value ;;
    esac
done < "$1"
[ "$cost" = 0 ] || sleep "$cost"
printf '%s 0x%s\n' "$name" "$magic" > "$2.tmp"
mv "$2.tmp" "$2"
