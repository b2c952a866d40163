"""--artifact and --ignore globs follow .gitignore's rules (through pathspec)."""

import pytest

from fuzzer.observe import Entry, Manifest, matches_any


@pytest.mark.parametrize("path, glob, matched", [
    ("build/x.o", "build/*.o", True),
    ("build/sub/x.o", "build/*.o", False),  # a slash anchors the pattern; * stops at /
    ("a/b.o", "a/**/b.o", True),  # ** matches zero directories too
    ("a/x/y/b.o", "a/**/b.o", True),
    ("out/x", "out/", True),  # a directory pattern takes everything under it
    ("out/deep/x", "out/", True),
    ("out", "out/", False),  # ... but not a file of that name
    ("deep/dir/x.o", "*.o", True),  # no slash: any depth
    ("sub/build/x.o", "build/*.o", False),
    ("lib/libops.so", "lib/*.a", False),
])
def test_gitignore_semantics(path, glob, matched):
    assert matches_any(path, [glob]) is matched


def test_a_later_negation_takes_a_file_back():
    assert matches_any("logs/a.log", ["*.log"])
    assert not matches_any("logs/keep.log", ["*.log", "!keep.log"])


def test_select_uses_the_same_rules():
    manifest = Manifest({p: Entry("file", "d") for p in ("build/x.o", "build/sub/y.o", "out/z", "README")})
    assert set(manifest.select(["build/*.o", "out/"]).entries) == {"build/x.o", "out/z"}
    assert set(manifest.select((), ["build/"]).entries) == {"out/z", "README"}
