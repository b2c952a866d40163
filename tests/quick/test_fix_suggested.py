"""The fixes a campaign suggests without rebuilding: patches for archives and `date`, the
remedy in words where no build file can be edited, and what this host could not test."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer.fix import by_hand, suggest
from fuzzer.fix.archive import tar_gzip
from fuzzer.fix.stabiliser import intrinsic
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit, Fix, FixStatus, Hazard, HazardType, Kind, Proof

from conftest import make_project

CLAMPED = "--sort=name --mtime=@$${SOURCE_DATE_EPOCH:-0} --clamp-mtime --owner=0 --group=0 --numeric-owner"


@pytest.mark.parametrize("line, expected", [
    ("\ttar czf docs.tar.gz pages", f"\ttar {CLAMPED} -czf docs.tar.gz pages"),
    ("\ttar --sort=name --owner=0 --group=0 --numeric-owner -czf d.tgz pages",
     "\ttar --mtime=@$${SOURCE_DATE_EPOCH:-0} --clamp-mtime --sort=name --owner=0 --group=0 --numeric-owner "
     "-czf d.tgz pages"),
    ("\ttar cf - pages | gzip -9 > d.tgz", f"\ttar {CLAMPED} -cf - pages | gzip -n -9 > d.tgz"),
    ("\tgzip -f docs.tar", "\tgzip -n -f docs.tar"),
    ("\tgzip -9n docs.tar", "\tgzip -9n docs.tar"),
    ("\tcat x | gzip --no-name > y.gz", "\tcat x | gzip --no-name > y.gz"),
])
def test_tar_and_gzip_gain_what_they_lack_to_record_no_time_of_the_build(line, expected):
    assert tar_gzip(line)[0] == expected


def test_an_old_style_tar_bundle_whose_letters_take_two_words_is_left_to_the_user():
    with pytest.raises(NoPatch, match="old-style"):
        tar_gzip("\ttar cfb x.tar 20 pages")


@given(st.lists(st.sampled_from(["tar", "-czf", "x.tgz", "pages", "|", "gzip", "-9", ">", "y", "--sort=name",
                                 "--clamp-mtime", "-n", ";", "echo"]), max_size=12))
def test_tar_and_gzip_options_are_added_once(words):
    line = "\t" + " ".join(words)
    try:
        once, _ = tar_gzip(line)
    except NoPatch:
        return
    assert tar_gzip(once) == (once, [])


def date_step(tmp_path, recipe: str, stabilized_by=("clock",)):
    make_project(tmp_path, f"""
        all: stamp.h
        stamp.h:
            {recipe}
        """)
    culprit = Culprit(recipe.replace("$$", "$"), ["sh", "-c", recipe], ".", ["stamp.h"], Kind.INTRINSIC,
                      stabilized_by=list(stabilized_by), finding_id="f1")
    return culprit, Tree(tmp_path, "make -j{jobs}")


def test_a_date_written_into_a_file_is_taken_from_source_date_epoch(tmp_path):
    culprit, tree = date_step(tmp_path, """echo "#define D \\"$$(date '+%F %T')\\"" > $@""")
    remedy = intrinsic(culprit, tree)
    assert "+\techo \"#define D \\\"$$(date -d @$${SOURCE_DATE_EPOCH:-0} '+%F %T')\\\"\" > $@" in remedy.patch


@pytest.mark.parametrize("stabilized_by", [(), ("clock",)])
def test_a_date_step_without_another_stabiliser_is_dated_whether_or_not_the_clock_was_tested(tmp_path, stabilized_by):
    culprit, tree = date_step(tmp_path, "date +%s > $@", stabilized_by)
    assert "+\tdate -d @$${SOURCE_DATE_EPOCH:-0} +%s > $@" in intrinsic(culprit, tree).patch


def test_a_date_already_given_its_date_or_another_stabiliser_keeps_the_prefix_remedy(tmp_path):
    culprit, tree = date_step(tmp_path, "TZ=$$(cat tz) date -d @1 > $@", ("TZ",))
    assert "+\tTZ=UTC TZ=$$(cat tz) date -d @1 > $@" in intrinsic(culprit, tree).patch


def test_the_clock_not_tested_is_said_when_faketime_is_missing(monkeypatch):
    culprit = Culprit("date > stamp", ["date"], ".", ["stamp"], Kind.INTRINSIC)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert by_hand.untested(culprit) == ["clock not tested: faketime is not installed"]
    race = Culprit("cc -c x.c", ["cc"], ".", ["x.o"], Kind.RACE)
    assert by_hand.untested(race) == []


@pytest.mark.parametrize("entry, expected", [
    (Hazard(HazardType.MKDIR_RACE, "obj/", "cc -o obj/x.o", "mkdir -p obj"), "| obj`"),
    (Hazard(HazardType.READ_BEFORE_WRITE, "config.h", "cc -c bpf.c", "sh gen.sh", missing_edge="bpf.o: config.h"),
     "declare bpf.o: config.h"),
    (Culprit("tar czf ../x.tar.gz .", [], ".", ["x.tar.gz"], Kind.ORDER), "--clamp-mtime --owner=0"),
    (Culprit("sh -c 'tar cf - . | gzip > x.tgz'", [], ".", ["x.tgz"], Kind.ORDER), "gzip -n"),
    (Culprit("sh stamp.sh", [], ".", ["s"], Kind.INTRINSIC, stabilized_by=["clock"]), "run the step with clock fixed"),
    (Culprit("sh -c 'date > s'", [], ".", ["s"], Kind.INTRINSIC), "date -d @$SOURCE_DATE_EPOCH"),
    (Culprit("python3 gen.py", [], ".", ["g.c"], Kind.INTRINSIC, stabilized_by=["PYTHONHASHSEED"]),
     "with PYTHONHASHSEED=0; upstream: iterate sorted"),
])
def test_the_remedy_in_words_follows_the_findings_shape(entry, expected):
    assert expected in by_hand.remedy(entry)


def test_a_build_no_remedy_can_edit_gets_the_remedy_in_words_as_a_suggestion(tmp_path):
    hazard = Hazard(HazardType.MKDIR_RACE, "obj/", "cc -o obj/x.o", "mkdir -p obj", finding_id="h1")
    race = Culprit("cc -o obj/x.o", [], ".", ["obj/x.o"], Kind.RACE, finding_id="c1")
    fixed = suggest.suggest([race, hazard], [hazard], Tree(tmp_path, "./build.sh"), tmp_path / "fixes")
    by_id = {f.finding_id: f.fix for f in fixed}
    assert by_id["h1"].status == FixStatus.SUGGESTED and by_id["h1"].patch == ""
    assert "order-only prerequisite" in by_id["h1"].by_hand and "no build file" in by_id["h1"].why
    assert by_id["c1"] == by_id["h1"]  # the race shares its hazard's fix
    assert not (tmp_path / "fixes").exists()


def test_a_patched_suggestion_is_written_where_the_report_says(tmp_path):
    make_project(tmp_path / "src", """
        all: obj/x.o
        obj/%.o: %.c
            cc -c $< -o $@
        """, {"x.c": "int x;\n"})
    hazard = Hazard(HazardType.MKDIR_RACE, "obj/", "cc -c x.c -o obj/x.o", "mkdir -p obj", finding_id="h1")
    [fixed] = suggest.suggest([hazard], [hazard], Tree(tmp_path / "src", "make -j{jobs}"), tmp_path / "fixes")
    assert (fixed.fix.status, fixed.fix.file) == (FixStatus.SUGGESTED, "Makefile")
    assert open(fixed.fix.patch).read() == fixed.patch and "+obj/%.o: %.c | obj" in fixed.patch


def test_the_fix_in_words_matches_its_status():
    proof = Proof("jobs=8", 3, 3, after=12, bound=0.221)
    assert suggest.described(Fix(FixStatus.PROVEN, patch="/p", proof=proof)) == \
        "proven: before 3/3 reproduced; after 0/12, divergence below 23% at 95% (jobs=8)"
    assert suggest.described(Fix(FixStatus.SUGGESTED, patch="/p")).startswith("suggested, not proven: `buildfuzz fix`")
    assert suggest.described(Fix(FixStatus.NOT_PROVEN, patch="/p", why="x")) == "suggested, not proven: x"
    assert suggest.described(Fix(FixStatus.NONE, why="y")) == "no patch: y"
