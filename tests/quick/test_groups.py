"""The tests are grouped by cost, a directory a group, and the directory is the mark
(tests/conftest.py): a test file outside the groups, or a slow mark inside tests/quick,
would put a real build into the group that must run in seconds."""

import re

from conftest import ROOT

TESTS = ROOT / "tests"
GROUPS = ("quick", "slow", "realbuild")
SLOW_MARK = re.compile(r"pytest\.mark\.slow")


def test_every_test_file_is_in_a_group():
    assert sorted(path.name for path in TESTS.glob("test_*.py")) == []
    assert {path.parent.name for path in TESTS.rglob("test_*.py")} <= set(GROUPS)


def test_no_quick_test_is_marked_slow():
    marked = [path.name for path in (TESTS / "quick").glob("test_*.py") if SLOW_MARK.search(path.read_text())]
    assert marked == []
