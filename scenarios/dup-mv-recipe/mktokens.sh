#!/bin/sh
# mktokens.sh TOKENS.DEF STEM: write STEM.h (token numbers) and STEM.c (token names).
# Each output is started with `>` and grown one line per token with `>>`, the way
# many hand-written generator scripts do it.
def=$1 stem=$2

# Refuse duplicate token names before writing anything.
dups=$(sed -e '/^#/d' -e '/^$/d' -e 's/ .*//' "$def" | sort | uniq -d)
if [ -n "$dups" ]; then
    echo "mktokens.sh: duplicate tokens in $def:" $dups >&2
    exit 1
fi

echo "/* generated from $def by mktokens.sh, do not edit */" > $stem.h
echo "/* generated from $def by mktokens.sh, do not edit */" > $stem.c
echo "#pragma once" >> $stem.h
echo "const char *const token_names[] = {" >> $stem.c
n=0
while read name text; do
    case $name in ''|'#'*) continue ;; esac
    echo "#define TOK_$name $n" >> $stem.h
    lower=$(echo "$name" | tr A-Z a-z)       # names are printed in lower case
    echo "    \"$lower\"," >> $stem.c
    n=$((n + 1))
done < "$def"
echo "};" >> $stem.c
echo "const int token_count = sizeof token_names / sizeof token_names[0];" >> $stem.c
echo "#define TOK_COUNT_DECLARED $n" >> $stem.h
