"""`buildfuzz replay` judges the way the campaign did: on debian-records-date, whose .deb is
reproducible and whose .buildinfo/.changes differ only in Build-Date and the environment
they record, a replay matches both the reference and the run it replays (exit 0)."""

import shutil

from conftest import SCENARIOS, buildfuzz


def test_a_replay_of_a_reproducible_debian_build_does_not_reproduce_its_upload_records(tmp_path):
    tree, store = tmp_path / "src", tmp_path / "store"
    shutil.copytree(SCENARIOS / "debian-records-date", tree, ignore=shutil.ignore_patterns("scenario.toml"))
    fuzzed = buildfuzz("run", "--source", tree, "--runs", 3, "--seed", 1, "--store", store, "--quiet",
                       "--no-localize", "--", "./buildpackage", "{jobs}")
    assert fuzzed.returncode == 0, fuzzed.stdout + fuzzed.stderr
    replayed = buildfuzz("replay", "--store", store, "--campaign", 1, "--run", 1)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    lines = replayed.stdout.splitlines()
    assert lines[1].startswith("same digests as run 1 ("), replayed.stdout
    assert lines[2].startswith("same digests as the reference ("), replayed.stdout
    assert lines[-1] == "not reproduced: the build matched the reference"
