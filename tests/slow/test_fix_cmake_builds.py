"""`buildfuzz fix` on a small CMake project whose one custom command writes a hash's keys in
Perl's order: the command runs under `${CMAKE_COMMAND} -E env PERL_HASH_SEED=0 ...`, proven."""

import json

from conftest import buildfuzz

CONFIGURE = "cmake -S . -B build -G Ninja >/dev/null && cmake --build build -j {jobs}"


WORDS_CMAKE = """\
cmake_minimum_required(VERSION 3.13)
project(words NONE)
add_custom_command(OUTPUT words.txt
  COMMAND perl ${CMAKE_CURRENT_SOURCE_DIR}/gen.pl words.txt
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/gen.pl)
add_custom_target(words ALL DEPENDS words.txt)
"""
# a generator that writes a hash's keys in Perl's per-process order
WORDS_GEN = ("my %w = map { $_ => 1 } qw(alpha beta gamma delta epsilon zeta eta theta iota kappa);\n"
             "open(my $out, '>', $ARGV[0]) or die; print $out \"$_\\n\" for keys %w;\n")


def test_an_intrinsic_custom_command_gets_cmake_e_env_for_its_stabiliser_proven(tmp_path):
    tree, store, report = tmp_path / "src", tmp_path / "store", tmp_path / "report.json"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text(WORDS_CMAKE)
    (tree / "gen.pl").write_text(WORDS_GEN)
    fuzzed = buildfuzz("run", "--source", tree, "--runs", 3, "--seed", 1, "--store", store, "--quiet",
                       "--ignore", "build/.ninja_log", "--", CONFIGURE)
    assert fuzzed.returncode == 1, fuzzed.stderr
    fixed = buildfuzz("fix", "--store", store, "--report-json", report, "--after", 6)
    [culprit] = [c for c in json.loads(report.read_text())["culprits"] if c["kind"] == "intrinsic"]
    assert culprit["stabilized_by"] == ["PERL_HASH_SEED"], culprit
    assert culprit["fix_status"].startswith("proven: before "), culprit["fix_status"]
    assert _patch_lines(culprit) == [
        "-  COMMAND perl ${CMAKE_CURRENT_SOURCE_DIR}/gen.pl words.txt",
        "+  COMMAND ${CMAKE_COMMAND} -E env PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 perl ${CMAKE_CURRENT_SOURCE_DIR}/gen.pl"
        " words.txt"]
    assert "sort the keys before iterating a hash" in fixed.stdout


def _patch_lines(entry) -> list[str]:
    text = open(entry["fix"]).read()
    return [line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
