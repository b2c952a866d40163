"""`buildfuzz fix` on a configured tree (issue 30, fossil): its Makefile, written by
./configure, includes the rules by the tree's absolute path, so a patched copy built
elsewhere still built the unpatched rules (by hand: 6 of 6 -j2 builds of such a copy failed,
0 of 6 with the copy bound at the tree's path). The proof builds the patched copy there, in
the builds' mount namespace, and never writes into the user's tree."""

import json
import subprocess

import pytest

from conftest import buildfuzz

CONFIGURE = """\
#!/bin/sh
srcdir=$(cd "$(dirname "$0")" && pwd)
sed "s|@srcdir@|$srcdir|g" "$srcdir/Makefile.in" > Makefile
"""
MAKEFILE_IN = """\
SRCDIR = @srcdir@
all: bld bld/tool
include $(SRCDIR)/main.mk
Makefile: $(SRCDIR)/Makefile.in $(SRCDIR)/main.mk $(SRCDIR)/configure
\t$(SRCDIR)/configure
"""
# the link of a tool into bld/ does not wait for the step that makes bld/ (fossil's translate)
MAIN_MK = "bld:\n\tsleep 0.3; mkdir -p bld\nbld/tool: $(SRCDIR)/tool.sh\n\tcp $(SRCDIR)/tool.sh bld/tool\n"


def configured(tree):
    tree.mkdir()
    (tree / "configure").write_text(CONFIGURE)
    (tree / "configure").chmod(0o755)
    (tree / "Makefile.in").write_text(MAKEFILE_IN)
    (tree / "main.mk").write_text(MAIN_MK)
    (tree / "tool.sh").write_text("#!/bin/sh\necho tool\n")
    subprocess.run(["./configure"], cwd=tree, check=True)
    assert f"SRCDIR = {tree}" in (tree / "Makefile").read_text()
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tree.iterdir() if p.is_file()}


@pytest.mark.needs("unshare")
@pytest.mark.parametrize("store_inside", [False, True], ids=["store-beside", "store-inside"])
def test_a_patch_to_a_configured_tree_is_proven_at_the_trees_own_path(tmp_path, store_inside):
    tree, report = tmp_path / "src", tmp_path / "report.json"
    before = configured(tree)
    store = tree / ".buildfuzz" if store_inside else tmp_path / "store"
    fuzzed = buildfuzz("run", "-q", "--runs", 4, "--seed", 1, "--source", tree, "--store", store, "--",
                       "make -j{jobs}")
    assert fuzzed.returncode == 1, fuzzed.stdout + fuzzed.stderr
    fixed = buildfuzz("fix", "--store", store, "--report-json", report, "--after", 4)
    assert fixed.returncode in (0, 1), fixed.stdout + fixed.stderr
    [hazard] = [h for h in json.loads(report.read_text())["hazards"] if h["file"] == "bld/"]
    assert hazard["remedy"]["file"] == "main.mk", hazard["remedy"]
    assert hazard["remedy"]["status"] == "proven", hazard["remedy"]
    assert hazard["remedy"]["proof"]["at"] == str(tree)
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tree.iterdir() if p.is_file()}
    assert after == before, "the proof wrote into the user's tree"
