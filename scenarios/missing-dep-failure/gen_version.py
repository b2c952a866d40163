#!/usr/bin/env python3
"""Write version.h from VERSION (slowish: pretends to query the VCS first)."""
import sys, time

time.sleep(0.25)          # e.g. `git describe` on a big repository
with open("VERSION") as f:
    version = f.read().strip()
major, minor, patch = version.split(".")
with open(sys.argv[1], "w") as f:
    f.write('#define APP_VERSION "%s"\n#define APP_VERSION_MAJOR %s\n'
            '#define APP_VERSION_MINOR %s\n#define APP_VERSION_PATCH %s\n'
            % (version, major, minor, patch))
