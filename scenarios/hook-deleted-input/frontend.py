"""A build frontend's half of a backend hook call (pip's `_in_process` protocol): the
hook's arguments go into input.json, in a fixed order."""

import json
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f)["project"]
with open(sys.argv[2], "w") as out:
    json.dump({"hook_name": "prepare_metadata_for_build_wheel", "kwargs": {"project": project}}, out, sort_keys=True)
