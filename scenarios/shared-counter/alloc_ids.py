#!/usr/bin/env python3
"""Give every message of a catalog a globally unique numeric id.

Ids come from the shared counter file ids.next: read it, take as many ids as
the catalog needs, write the new value back.  There is no locking, so when
several catalogs are processed at once (make -j) they can read the same value
(duplicate ids, lost updates) or see each other's updates in any order.
Usage: python3 alloc_ids.py catalogs/NAME.msgs msg_NAME.h
"""
import os, sys, time

src, dst = sys.argv[1], sys.argv[2]
prefix = os.path.basename(src).split(".")[0].upper()
with open(src) as f:
    names = [line.strip() for line in f if line.strip()]

with open("ids.next") as f:          # read ...
    first = int(f.read())
time.sleep(0.05)                     # ... validate, format, etc. ...
# ... and write back.  The file itself is replaced atomically, but the
# read-modify-write as a whole is not.
tmp = "ids.next.%d" % os.getpid()
with open(tmp, "w") as f:
    f.write("%d\n" % (first + len(names)))
os.replace(tmp, "ids.next")

guard = "MSG_%s_H" % prefix
with open(dst, "w") as f:
    f.write("#ifndef %s\n#define %s\n" % (guard, guard))
    for i, name in enumerate(names):
        f.write("#define MSG_%s_%s %d\n" % (prefix, name, first + i))
    f.write("#endif\n")
