#!/usr/bin/env python3
"""Generate gen/app_features.h from features.conf (slowish: pretends to probe the
toolchain first).  gen/ comes before defaults/ on the include path, so once it
exists it shadows defaults/app_features.h."""
import os, sys, time

time.sleep(0.2)           # compiler/feature probes
conf = {}
with open("features.conf") as f:
    for line in f:
        line = line.split("#", 1)[0]
        if "=" in line:
            k, v = (s.strip() for s in line.split("=", 1))
            conf[k] = int(v)
names = [k for k in ("simd", "threads") if conf.get(k)]
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    f.write("#define HAVE_SIMD %d\n#define HAVE_THREADS %d\n#define FEATURE_STRING \"%s\"\n"
            % (conf.get("simd", 0), conf.get("threads", 0), "+".join(names) or "baseline"))
os.replace(tmp, sys.argv[1])
