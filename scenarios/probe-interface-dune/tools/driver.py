"""driver.py build: a stand-in for `dune build` of one library.

Reads lib/dune (`(modules A B ...)`, in order), copies the sources into _build/default,
and compiles each module there with tools/mlcomp.py (cwd _build/default), as many at once
as the CPUs this process may use, a module after the modules its source `open`s (its
dependency scan sees nothing else); then archives the objects into lib/lib.cma.
"""

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "_build", "default")
OBJS = "lib/.lib.objs/byte"
COMPILER = os.path.join(ROOT, "tools", "mlcomp.py")


def modules() -> list[str]:
    with open(os.path.join(ROOT, "lib", "dune")) as f:
        return re.search(r"\(modules ([^)]*)\)", f.read())[1].split()


def opened(module: str) -> list[str]:
    with open(os.path.join(ROOT, "lib", module.lower() + ".ml")) as f:
        return re.findall(r"^open (\w+)", f.read(), re.MULTILINE)


def compile_module(module: str, done: dict) -> int:
    for dep in opened(module):
        if done[dep].result() != 0:
            return 1
    return subprocess.call([sys.executable, COMPILER, "-I", OBJS, "-o", f"{OBJS}/lib__{module}.cmo",
                            "-c", "-impl", f"lib/{module.lower()}.ml"], cwd=BUILD)


def main() -> int:
    names = modules()
    os.makedirs(os.path.join(BUILD, OBJS), exist_ok=True)
    for name in names:
        shutil.copy(os.path.join(ROOT, "lib", name.lower() + ".ml"), os.path.join(BUILD, "lib"))
    jobs = len(os.sched_getaffinity(0))
    with ThreadPoolExecutor(jobs) as pool:
        done: dict = {}
        for name in names:
            done[name] = pool.submit(compile_module, name, done)
        if any(f.result() != 0 for f in done.values()):
            return 1
    return subprocess.call([sys.executable, COMPILER, "-a", "-o", "lib/lib.cma",
                            *(f"{OBJS}/lib__{m}.cmo" for m in names)], cwd=BUILD)


if __name__ == "__main__":
    sys.exit(main())
