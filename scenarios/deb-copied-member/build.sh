#!/bin/sh
# A script-driven package build whose one step (package.sh, as `debian/rules binary` is
# under dpkg-buildpackage) makes, copies and packs: the culprit is the process inside it
# that wrote the differing member's bytes, not the copy and not the packer.
set -e
sh ./package.sh
