"""mlcomp.py -I DIR -o OBJ -c -impl SRC | -a -o LIB OBJ...: a stand-in for ocamlc.

Compiling: reads SRC, whose `Name.value` references name the modules it uses; for each,
stats DIR/lib__Name.cmi (as ocamlc looks up the .cmi of every module it references) and,
when there, reads it; writes the interface next to OBJ (.cmi) and the object OBJ, which
records each import's interface digest, or "opaque" when the interface was not there.
Archiving (-a): concatenates the objects into LIB.
"""

import hashlib
import os
import re
import sys
import time

args = sys.argv[1:]
out = args[args.index("-o") + 1]
if args[0] == "-a":
    with open(out, "w") as lib:
        for obj in args[3:]:
            with open(obj) as f:
                lib.write(f.read())
    sys.exit(0)

include, src = args[args.index("-I") + 1], args[args.index("-impl") + 1]
module = os.path.splitext(os.path.basename(src))[0].capitalize()
with open(src) as f:
    text = f.read()
uses = sorted(set(re.findall(r"\b([A-Z]\w*)\.[a-z_]\w*", text)) - {module})
values = re.findall(r"^let (\w+)", text, re.MULTILINE)

imports = []
for name in uses:
    cmi = os.path.join(include, f"lib__{name}.cmi")
    try:
        os.stat(cmi)
    except FileNotFoundError:
        imports.append(f"{name} opaque")
        continue
    with open(cmi, "rb") as f:
        imports.append(f"{name} {hashlib.md5(f.read()).hexdigest()}")

time.sleep(0.2)  # type checking and code generation take a while
with open(os.path.splitext(out)[0] + ".cmi", "w") as f:
    f.write(f"interface {module}\n" + "".join(f"val {v}\n" for v in values))
with open(out, "w") as f:
    f.write(f"object {module}\n" + "".join(f"import {i}\n" for i in imports)
            + "".join(f"code {v}\n" for v in values))
