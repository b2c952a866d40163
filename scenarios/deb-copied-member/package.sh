#!/bin/sh
# Generate build/foo.map, copy it into the staging tree by plain reads and writes (dd: no
# copy_file_range, no sendfile), pack the staging tree into ../foo_1.0_amd64.deb (ar of debian-binary,
# control.tar.xz, data.tar.xz) with every archive's metadata fixed: names sorted, mtimes 0,
# owners root, one xz thread, `ar D`. Only the member usr/share/foo/foo.map differs.
set -e
# the interpreter resolved once (a pyenv shim would start ~200 processes per call)
PY=$(python3 -c 'import sys; print(sys.executable)')
TAR="tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu"
mkdir -p build stage/usr/share/foo stage/usr/share/doc/foo
"$PY" mklabels.py build/foo.map
dd if=build/foo.map of=stage/usr/share/foo/foo.map status=none
cp copyright stage/usr/share/doc/foo/copyright
$TAR -C stage -cf - ./usr | xz -T1 -6 > build/data.tar.xz
$TAR -cf - ./control | xz -T1 -6 > build/control.tar.xz
echo 2.0 > build/debian-binary
(cd build && ar rcD ../../foo_1.0_amd64.deb debian-binary control.tar.xz data.tar.xz)
