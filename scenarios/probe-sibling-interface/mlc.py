"""mlc.py SRC -I DIR -o OBJ: a stand-in for ocamlc -c.

Reads SRC, whose `uses NAME` lines name the modules it uses; lists the include
directory DIR and probes DIR/NAME.cmi for each (as ocamlc looks for the .cmi of
every module it references); writes the interface DIR/MODULE.cmi and the object
OBJ, which records each import's interface digest, or "opaque" when the
interface was not there.
"""

import hashlib
import os
import sys
import time

src, include, obj = sys.argv[1], sys.argv[3], sys.argv[5]
module = os.path.splitext(os.path.basename(src))[0]
with open(src) as f:
    lines = [line.strip() for line in f if line.strip()]
uses = [line.split()[1] for line in lines if line.startswith("uses ")]
values = [line.split()[1] for line in lines if line.startswith("val ")]

listed = sorted(os.listdir(include))  # the include directory, as the compiler's load path caches it
imports = []
for name in uses:
    cmi = os.path.join(include, name + ".cmi")
    if os.path.exists(cmi):
        with open(cmi, "rb") as f:
            imports.append(f"{name} {hashlib.md5(f.read()).hexdigest()}")
    else:
        imports.append(f"{name} opaque")

time.sleep(0.2)  # type checking and code generation take a while
interface = "".join(f"val {v}\n" for v in values)
with open(os.path.join(include, module + ".cmi"), "w") as f:
    f.write(f"interface {module}\n{interface}")
with open(obj, "w") as f:
    f.write(f"object {module}\n")
    f.write("".join(f"import {i}\n" for i in imports))
    f.write("".join(f"code {v}\n" for v in values))
