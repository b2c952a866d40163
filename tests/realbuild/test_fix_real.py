"""`buildfuzz fix`: remedies written in the Makefile's own style, applied exactly, and proven
(or not) by rebuilding the schedule that showed the finding."""

import json
import shutil

from conftest import SCENARIOS, buildfuzz


def _fixed(tmp_path, source, *, runs=6, after=12, options=()):
    """Fuzz `source` copied into tmp_path, then `buildfuzz fix`: the JSON report and fix's output.
    `after` 6 where the finding shows in nearly every build of its schedule (before 3/3): a
    patch that left it would show in the first after-build, and 0 of 6 still bounds what
    is left below 40%; the default 12 is checked once, on missing-dep-failure."""
    tree, store, report = tmp_path / "src", tmp_path / "store", tmp_path / "report.json"
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns("scenario.toml"))
    fuzzed = buildfuzz("run", "--source", tree, "--runs", runs, "--seed", 1, "--store", store, "--quiet",
                       "--report-json", tmp_path / "campaign.json", *options, "--", "make", "-j{jobs}")
    assert fuzzed.returncode == 1, fuzzed.stderr
    fixed = buildfuzz("fix", "--store", store, "--report-json", report, "--after", after)
    return json.loads(report.read_text()), fixed


def _suggested(tmp_path, section, finding_id):
    """The campaign's own report on a finding's fix, before `buildfuzz fix` ran: the same
    patch, not yet proven."""
    report = json.loads((tmp_path / "campaign.json").read_text())
    return _entry(report, section, finding_id=finding_id)["remedy"]


def _entry(report, section, **match):
    found = [e for e in report[section] if all(e[k] == v for k, v in match.items())]
    assert found, report[section]
    return found[0]


def _patch_lines(entry) -> list[str]:
    text = open(entry["fix"]).read()
    return [line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_a_missing_header_dependency_is_added_and_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "missing-dep-failure")
    hazard = _entry(report, "hazards", type="read-before-write", file="version.h")
    assert hazard["fix_status"].startswith("proven: before "), hazard["fix_status"]
    assert "after 0/12, divergence below 23% at 95%" in hazard["fix_status"]
    assert _patch_lines(hazard) == ["-main.o: main.c util.h", "+main.o: main.c util.h version.h"]
    race = _entry(report, "culprits", kind="race")
    assert race["fix"] == hazard["fix"]  # the race's step is the hazard's reader: one patch


def test_a_duplicated_multi_target_recipe_is_grouped_and_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "multi-target-recipe", after=6)
    hazard = _entry(report, "hazards", type="duplicate-execution")
    assert hazard["fix_status"].startswith("proven: "), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-opcodes.h optable.inc opnames.inc: opcodes.def mkopcodes.sh",
                                    "+opcodes.h optable.inc opnames.inc &: opcodes.def mkopcodes.sh"]


def test_a_mkdir_race_gets_an_order_only_prerequisite_proven_then_applied_once(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "mkdir-race", after=6)
    hazard = _entry(report, "hazards", type="mkdir-race")
    assert hazard["fix_status"].startswith("proven: "), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-obj/%.o: src/%.c src/ring.h", "+obj/%.o: src/%.c src/ring.h | obj"]
    assert fixed.returncode == 0, fixed.stdout
    suggested = _suggested(tmp_path, "hazards", hazard["finding_id"])
    assert (suggested["status"], suggested["proof"]) == ("suggested", None)
    assert open(suggested["patch"]).read() == open(hazard["fix"]).read()
    assert (hazard["remedy"]["status"], hazard["remedy"]["proof"]["still"]) == ("proven", 0)
    store, finding = tmp_path / "store", hazard["finding_id"]
    assert buildfuzz("fix", "--store", store, "--apply", finding).returncode == 0
    assert "obj/%.o: src/%.c src/ring.h | obj" in (tmp_path / "src" / "Makefile").read_text()
    again = buildfuzz("fix", "--store", store, "--apply", finding)
    assert again.returncode == 2 and "changed since the patch was made" in again.stderr


def test_a_prerequisite_missing_only_under_shuffle_at_j1_is_a_hazard_with_its_line_and_a_proven_fix(tmp_path):
    """Serial: the compile and the header's generator never overlap. The hazard comes from
    make's database (bpf.o's rule lacks config.h) and the failed shuffled run's trace."""
    report, fixed = _fixed(tmp_path, SCENARIOS / "shuffle-missing-header", runs=20, after=6,
                           options=("--jobs", "1-1"))
    hazard = _entry(report, "hazards", type="read-before-write", file="config.h")
    assert (hazard["missing_edge"], hazard["rule"], hazard["status"]) == ("bpf.o: config.h", "Makefile:22", "manifest")
    assert hazard["fix_status"].startswith("proven: before 3/3"), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-bpf.o: bpf.c tracetool.h", "+bpf.o: bpf.c tracetool.h config.h"]
    race = _entry(report, "culprits", kind="race")
    assert "gen_config.sh" in race["other_step"] and race["fix"] == hazard["fix"]


def test_seven_compiles_missing_a_directory_a_phony_step_makes_are_one_culprit_with_one_proven_fix(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "phony-dirs", runs=8, after=6)
    [race] = [c for c in report["culprits"] if c["kind"] == "race"]
    assert len(race["steps"]) == 7 and race["other_step"] == "mkdir -p build/object"
    hazard = _entry(report, "hazards", type="mkdir-race", file="build/object/")
    assert hazard["missing_edge"].endswith(": | build/object") and hazard["rule"] == "Makefile:26"
    assert hazard["fix_status"].startswith("proven: "), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-build/object/%.o: src/%.c src/kv.h", "+build/object/%.o: src/%.c src/kv.h | build/object",
                                    "+", "+build/object:", "+\tmkdir -p $@"]
    assert race["fix"] == hazard["fix"]
    suggested = _suggested(tmp_path, "culprits", race["finding_id"])
    assert open(suggested["patch"]).read() == open(hazard["fix"]).read()


def test_a_hash_seed_generator_gets_its_stabiliser_for_that_step_only(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "hashseed", runs=4, after=6)
    culprit = _entry(report, "culprits", kind="intrinsic")
    assert culprit["fix_status"].startswith("proven: before 3/3 reproduced; after 0/6, divergence below 40%"), \
        culprit["fix_status"]
    assert _patch_lines(culprit) == ["-\t$(PYTHON) gen_dispatch.py commands.txt $@",
                                     "+\tPYTHONHASHSEED=0 $(PYTHON) gen_dispatch.py commands.txt $@"]
    assert "sort before numbering" in fixed.stdout


def test_a_race_that_showed_as_failures_is_proven_by_failures_beside_another_cause(tmp_path):
    """The missing header dependency is real, and its patch right, but the build also records
    the time to the nanosecond: after the patch the builds still differ, in a file that is
    another finding's. The race showed as failures; none fails after the patch, and the
    proof says it judged by failures."""
    source = tmp_path / "given"
    shutil.copytree(SCENARIOS / "missing-dep-failure", source)
    makefile_path = source / "Makefile"
    text = makefile_path.read_text().replace("all: version.h app", "all: version.h app stamp.txt")
    makefile_path.write_text(text + "\nstamp.txt:\n\tdate +%s%N > $@\n")
    report, _ = _fixed(tmp_path, source, runs=4)
    hazard = _entry(report, "hazards", type="read-before-write", file="version.h")
    assert hazard["fix_status"].startswith("proven: before "), hazard["fix_status"]
    assert "judged by failures" in hazard["fix_status"]
    assert any(a["path"] == "stamp.txt" for a in report["divergent_artifacts"])  # still there, as its own


def test_archive_headers_are_made_deterministic_and_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "ar-mtime", runs=4, after=6)
    culprit = _entry(report, "culprits", kind="order")
    assert culprit["fix_status"].startswith("proven: "), culprit["fix_status"]
    assert _patch_lines(culprit) == ["-\tar rcSU $@ $(OBJS)", "+\tar rcSD $@ $(OBJS)"]


def test_deterministic_headers_do_not_fix_members_in_completion_order(tmp_path):
    """`ar D` is the obvious patch for an archive that varies, but libops.a's members follow
    `ls -tr`: the proof must say the patch did not fix it."""
    report, fixed = _fixed(tmp_path, SCENARIOS / "archive-order", runs=4)
    culprit = _entry(report, "culprits", kind="order")
    assert _patch_lines(culprit) == ["-\tar rcs $@ $$(ls -tr $(OBJS))", "+\tar rcsD $@ $$(ls -tr $(OBJS))"]
    assert culprit["fix_status"].startswith("suggested, not proven: before "), culprit["fix_status"]
    assert "still showed it (libops.a differs)" in culprit["fix_status"]


def test_a_tarball_whose_members_carry_mtimes_gets_tars_options_suggested_then_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "tar-gzip-mtimes", runs=4, after=6)
    culprit = _entry(report, "culprits", outputs=["docs.tar.gz"])
    assert _suggested(tmp_path, "culprits", culprit["finding_id"])["status"] == "suggested"
    assert culprit["remedy"]["status"] == "proven", culprit["remedy"]
    assert _patch_lines(culprit) == [
        "-\ttar --sort=name --owner=0 --group=0 --numeric-owner -czf docs.tar.gz pages",
        "+\ttar --mtime=@$${SOURCE_DATE_EPOCH:-0} --clamp-mtime --sort=name --owner=0 --group=0 --numeric-owner "
        "-czf docs.tar.gz pages"]


def test_a_gzip_header_holding_its_inputs_mtime_gets_gzip_n_suggested_then_proven(tmp_path):
    report, fixed = _fixed(tmp_path, SCENARIOS / "gzip-header-mtime", runs=4, after=6)
    culprit = _entry(report, "culprits", outputs=["docs.tar.gz"])
    assert _suggested(tmp_path, "culprits", culprit["finding_id"])["status"] == "suggested"
    assert culprit["remedy"]["status"] == "proven", culprit["remedy"]
    assert "gzip -n -9c docs.tar > $@" in _patch_lines(culprit)[1]


def test_a_date_written_into_a_file_is_taken_from_source_date_epoch_suggested_then_proven(tmp_path):
    """`date` ignores SOURCE_DATE_EPOCH: the patch dates it from the variable. Without
    faketime the clock is never tried, and the fix says so."""
    report, fixed = _fixed(tmp_path, SCENARIOS / "date-stamp", runs=4, after=6)
    culprit = _entry(report, "culprits", kind="intrinsic")
    suggested = _suggested(tmp_path, "culprits", culprit["finding_id"])
    assert (suggested["status"], suggested["file"]) == ("suggested", "Makefile")
    assert culprit["remedy"]["status"] == "proven", culprit["remedy"]
    assert culprit["remedy"]["proof"]["reproduced"] > 0 and culprit["remedy"]["proof"]["still"] == 0
    assert _patch_lines(culprit)[1] == \
        "+\techo \"#define BUILD_DATE \\\"$$(date -d @$${SOURCE_DATE_EPOCH:-0} '+%Y-%m-%d %H:%M:%S')\\\"\" > $@"
    untested = ["clock not tested: faketime is not installed"] if shutil.which("faketime") is None else []
    assert culprit["remedy"]["untested"] == untested


def test_a_set_of_strings_line_gets_a_sorted_iteration_proven_and_applied_to_the_generator(tmp_path):
    """The hashseed generator iterates its set twice: both loops sorted, proven by the same
    rebuilds as the Makefile's PYTHONHASHSEED prefix, applied with --line to the generator."""
    report, fixed = _fixed(tmp_path, SCENARIOS / "hashseed", runs=4, after=6)
    culprit = _entry(report, "culprits", kind="intrinsic")
    line_fix = culprit["line"]["fix"]
    assert (line_fix["status"], line_fix["file"], line_fix["proof"]["still"]) == ("proven", "gen_dispatch.py", 0)
    assert line_fix["proof"]["reproduced"] > 0 and line_fix["proof"]["after"] == 6
    assert "line: proven: before " in fixed.stdout
    finding = culprit["finding_id"]
    assert buildfuzz("fix", "--store", tmp_path / "store", "--apply", finding, "--line").returncode == 0
    assert (tmp_path / "src" / "gen_dispatch.py").read_text().count("for name in sorted(names):") == 2
    assert "PYTHONHASHSEED" not in (tmp_path / "src" / "Makefile").read_text()  # the build file's patch is its own
