#!/bin/sh
# mkman.sh VERSION_H OUT: the manual page, whose header line carries the version from the header
set -e
version=$(sed -n 's/^#define STAMP_VERSION "\(.*\)"$/\1/p' "$1")
printf '.TH STAMP 1 "" "stamp %s"\n.SH NAME\nstamp \\- print a version stamp\n' "$version" > "$2"
