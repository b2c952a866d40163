"""Archives that record what the build did not choose: `ar` with deterministic headers (D:
zero mtimes, uids, modes), `tar` with sorted names and fixed metadata (its members' mtimes
clamped to SOURCE_DATE_EPOCH), `gzip -n` (no name and no mtime in its header). Order in the
archive's command line itself (`$(ls -tr ...)`) is not touched: the proof says so."""

from __future__ import annotations

import re

from fuzzer.fix.patch import Remedy
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit

AR = re.compile(r"(?P<head>(?:^|[\s;&|(`])ar\s+-?)(?P<modifiers>[A-Za-z]+)")
TAR = re.compile(r"(?:^|[\s;&|(`])tar(?=\s)")
TAR_BUNDLE = re.compile(r"\s+(?P<bundle>[A-Za-z]+)(?=\s|$)")  # old-style options: `tar czf x.tgz dir`
TAR_ARGUMENT_LETTERS = set("bCfFgIKLNTVX")  # old-style letters that take the next word
GZIP = re.compile(r"(?:^|[\s;&|(`/])gzip(?=\s|$|[;&|)`])")
GZIP_NO_NAME = re.compile(r"^\s+(?:[^;&|)`]*\s)?(?:-n|--no-name|-[a-zA-Z0-9]*n[a-zA-Z0-9]*)(?=\s|$|[;&|)`])")
# a recipe line is make's: `$$` is the shell's `$`; the remedy in words spells them as a shell does
TAR_OPTIONS = ("--sort=name", "--mtime=@$${SOURCE_DATE_EPOCH:-0}", "--clamp-mtime", "--owner=0", "--group=0",
               "--numeric-owner")
TAR_SHELL_OPTIONS = tuple(o.replace("$$", "$") for o in TAR_OPTIONS)
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
    changed, added = tar_gzip(line)
    if added:
        return tree.remedy(culprit.finding_id, f"{recipe.target} archived with {' and '.join(added)}",
                           recipe, index, changed)
    if TAR.search(line) or GZIP.search(line):
        raise NoPatch("tar and gzip already fix the metadata: the archive's input comes from elsewhere")
    said = next((why for tool, why in UNPATCHED.items() if tool in line), "")
    raise NoPatch(said or "the step is not an ar, tar or gzip command")


def tar_gzip(line: str) -> tuple[str, list[str]]:
    """The recipe line with what tar and gzip lack to record no time, owner or order of the
    build's, and what was added ([] when nothing)."""
    added = []
    if m := TAR.search(line):
        missing = [o for o in TAR_OPTIONS if o.split("=")[0] not in line]
        if missing:
            line = line[:m.end()] + " " + " ".join(missing) + _dashed(line[m.end():])
            added.append(f"tar {' '.join(missing)}")
    if (m := GZIP.search(line)) and not GZIP_NO_NAME.match(line[m.end():]):
        line = line[:m.end()] + " -n" + line[m.end():]
        added.append("gzip -n")
    return line, added


def _dashed(after_tar: str) -> str:
    """tar's arguments with an old-style bundle (`czf`, which must come first) written as
    the same short options (`-czf`), so that options may go before it; refused when two of
    its letters take a word (`cfb x.tar 20` is not `-cfb x.tar 20`)."""
    m = TAR_BUNDLE.match(after_tar)
    if m is None:
        return after_tar
    bundle = m["bundle"]
    if len([c for c in bundle if c in TAR_ARGUMENT_LETTERS]) > 1 or (
            set(bundle[:-1]) & TAR_ARGUMENT_LETTERS):
        raise NoPatch(f"tar's old-style options `{bundle}` take their words in order: add the options by hand")
    return after_tar[:m.start("bundle")] + "-" + after_tar[m.start("bundle"):]
