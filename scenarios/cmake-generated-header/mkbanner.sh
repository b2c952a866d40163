#!/bin/sh
# mkbanner.sh VERSION_H OUT: banner.c, whose string carries the version from the header
set -e
version=$(sed -n 's/^#define STAMP_VERSION "\(.*\)"$/\1/p' "$1")
printf '#include "banner.h"\n\nconst char *banner(void)\n{\n    return "stamp %s";\n}\n' "$version" > "$2"
