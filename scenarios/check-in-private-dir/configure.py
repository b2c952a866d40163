"""Configure: run each check in a private directory, as configure scripts do, then write
config.h, which includes what the checks found."""
import os
import subprocess
import sys

os.makedirs("conf-private", exist_ok=True)
subprocess.run([sys.executable, "../checks/cpus.py"], cwd="conf-private", check=True)
with open("config.h", "w", encoding="utf-8") as f:
    f.write('#define PACKAGE "pool"\n#include "conf-private/cpus.h"\n')
