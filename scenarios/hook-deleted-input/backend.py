"""A build backend's hook: reads the frontend's input.json and writes the project's
metadata. The keywords are deduplicated through a set of strings and written in its
order, which follows the string-hash seed (PYTHONHASHSEED)."""

import json
import sys

with open(sys.argv[1]) as f:
    project = json.load(f)["kwargs"]["project"]
keywords = list(set(project["keywords"]))
with open(sys.argv[2], "w") as out:
    json.dump({"Name": project["name"], "Version": project["version"], "Keywords": keywords}, out)
    out.write("\n")
