#!/bin/sh
# config.in ("NAME VALUE" lines) -> config.h, as a configure step would write it
echo "/* generated from $1 */"
echo "#ifndef CONFIG_H"
echo "#define CONFIG_H"
while read -r name value; do
    case "$value" in
        *[!0-9]*) echo "#define TT_$name \"$value\"" ;;
        *) echo "#define TT_$name $value" ;;
    esac
done < "$1"
echo "#endif"
