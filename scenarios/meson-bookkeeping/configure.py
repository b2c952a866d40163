"""A `meson setup` stand-in: writes Meson's bookkeeping where Meson does, then the header
the build reads. Like Meson, coredata.dat and build.dat carry random uuid4s, the log a
start time and the random directory a compiler check ran in; config.h is the same in
every build."""

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime

build = sys.argv[1]
private, logs = os.path.join(build, "meson-private"), os.path.join(build, "meson-logs")
os.makedirs(private, exist_ok=True)
os.makedirs(logs, exist_ok=True)
started = datetime.now().isoformat()
check_dir = tempfile.mkdtemp(dir=private, prefix="tmp")  # Meson's compiler checks run in such a directory
with open(os.path.join(check_dir, "testfile.c"), "w") as f:
    f.write("int main(void) { return 0; }\n")
check = subprocess.run(["cc", "testfile.c", "-o", "output.exe"], cwd=check_dir, capture_output=True, text=True)
shutil.rmtree(check_dir)
with open(os.path.join(private, "coredata.dat"), "wb") as f:
    pickle.dump({"version": "1.0.1", "lang_guids": {"c": str(uuid.uuid4()).upper()},
                 "options": {"buildtype": "debug", "optimization": "0"}}, f)
with open(os.path.join(private, "build.dat"), "wb") as f:
    pickle.dump({"project_guid": str(uuid.uuid4()).upper(), "targets": {"ops": str(uuid.uuid4()).upper()}}, f)
with open(os.path.join(logs, "meson-log.txt"), "w") as f:
    f.write(f"Build started at {started}\nMain binary: {sys.executable}\n"
            f"Running compile:\nWorking directory:  {os.path.abspath(check_dir)}\n"
            f"Command line:  cc testfile.c -o output.exe\nCompiler stdout:\n{check.stdout}\n"
            f"Compiler stderr:\n{check.stderr}\nC compiler for the host machine: cc\n")
with open(os.path.join(build, "config.h"), "w") as f:
    f.write("#define OPS_VERSION \"1.0\"\n#define OPS_SCALE 3\n")
