"""A tiny wheel builder, like `setup.py bdist_wheel`: zips a source tree into a wheel,
creating the output directory if needed. Member contents are always the same; the
members' zip timestamps and the build time recorded in its metadata are the clock's,
unless SOURCE_DATE_EPOCH is set (as wheel honours it)."""

import os
import sys
import time
import zipfile

source, wheel = sys.argv[1], sys.argv[2]
now = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
stamp = time.gmtime(now)[:6]
os.makedirs(os.path.dirname(wheel), exist_ok=True)
with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
    for root, dirs, files in os.walk(source):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            info = zipfile.ZipInfo(os.path.relpath(path, source), stamp)
            with open(path, "rb") as f:
                out.writestr(info, f.read())
    out.writestr(zipfile.ZipInfo("pkg-1.0.dist-info/WHEEL", stamp),
                 f"Wheel-Version: 1.0\nGenerator: mkwheel\nBuild-Time: {now}\nTag: py3-none-any\n")
