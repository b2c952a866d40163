"""Archives that record what the build did not choose: `ar` with deterministic headers (D:
zero mtimes, uids, modes), `tar` with sorted names and fixed metadata. Order in the
archive's command line itself (`$(ls -tr ...)`) is not touched: the proof says so."""

from __future__ import annotations

import re

from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit

AR = re.compile(r"(?P<head>(?:^|[\s;&|(`])ar\s+-?)(?P<modifiers>[A-Za-z]+)")
TAR = re.compile(r"(?:^|[\s;&|(`])tar(?=\s)")
TAR_OPTIONS = ("--sort=name", "--mtime=@$${SOURCE_DATE_EPOCH:-0}", "--owner=0", "--group=0", "--numeric-owner")
UNPATCHED = {"zip": "zip records each file's mtime: set them to SOURCE_DATE_EPOCH (touch -d) and sort the names",
             "wheel": "wheel takes its timestamps from SOURCE_DATE_EPOCH: export it for the step"}


def archive_flags(culprit: Culprit, tree: Tree) -> Remedy:
    recipe = tree.recipe_of(culprit.command, culprit.cwd, tuple(culprit.outputs))
    lines = tree.lines(recipe)
    index = tree.command_line(recipe, lines, culprit.argv)
    line = lines[index]
    if m := AR.search(line):
        modifiers = m["modifiers"].replace("U", "D") if "U" in m["modifiers"] else m["modifiers"] + "D"
        if "D" in m["modifiers"]:
            raise NoPatch("ar already runs with D: the archive's order or content comes from elsewhere")
        changed = line[:m.start("modifiers")] + modifiers + line[m.end("modifiers"):]
        return tree.remedy(culprit.finding_id, f"{recipe.target} archived with ar {modifiers} (deterministic "
                           "headers)", recipe, index, changed)
    if m := TAR.search(line):
        missing = [o for o in TAR_OPTIONS if o.split("=")[0] not in line]
        if not missing:
            raise NoPatch("tar already sorts and fixes the metadata: the archive's input comes from elsewhere")
        changed = line[:m.end()] + " " + " ".join(missing) + line[m.end():]
        return tree.remedy(culprit.finding_id, f"{recipe.target} archived with tar {' '.join(missing)}",
                           recipe, index, changed)
    said = next((why for tool, why in UNPATCHED.items() if tool in line), "")
    raise NoPatch(said or "the step is not an ar or tar command")
