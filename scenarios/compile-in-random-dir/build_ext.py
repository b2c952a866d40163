"""A build backend's extension builder, as setuptools runs one under pip: the source is
copied into a fresh directory from mkdtemp, compiled and linked there with the compiler's
working directory set to it, and the library copied back; the directory is removed."""

import os
import shutil
import subprocess
import sys
import tempfile

source, target = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="build-via-sdist-")
try:
    shutil.copyfile(source, os.path.join(work, "speed.c"))
    flags = os.environ.get("CFLAGS", "").split()  # as setuptools appends $CFLAGS
    subprocess.run(["gcc", "-g", "-O2", "-fPIC", *flags, "-c", "speed.c", "-o", "speed.o"], cwd=work, check=True)
    subprocess.run(["gcc", "-shared", "-o", "speed.so", "speed.o"], cwd=work, check=True)
    shutil.copyfile(os.path.join(work, "speed.so"), target)
finally:
    shutil.rmtree(work)
