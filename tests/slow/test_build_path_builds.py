"""A compile in a random directory under a wrapper (scenarios/compile-in-random-dir), end to
end: the culprit names the compile below the wrapper with kind build-path, from the bytes
both traced builds kept, and `buildfuzz fix` says the remedy without a patch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SCENARIOS, buildfuzz


@pytest.mark.needs("strace")
def test_the_compile_below_the_wrapper_is_named_with_its_directory_and_the_remedy(tmp_path):
    src = shutil.copytree(SCENARIOS / "compile-in-random-dir", tmp_path / "src")
    store, out = tmp_path / "store", tmp_path / "report.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "3", "--report-json", out, "--", "make -j{jobs}")
    assert r.returncode == 1, r.stderr
    (culprit,) = json.loads(out.read_text())["culprits"]
    writer = culprit["writer_process"]
    assert (culprit["kind"], culprit["outputs"]) == ("build-path", ["libspeed.so"])
    assert writer["argv"][:2] == ["gcc", "-g"] and "-c" in writer["argv"]
    assert writer["cwd"].startswith("/tmp/build-via-sdist-") and writer["wrote"] == [f"{writer['cwd']}/speed.o"]
    assert writer["recorded_dir"] == "/tmp/build-via-sdist-" + "X" * (len(writer["cwd"]) - len("/tmp/build-via-sdist-"))
    assert "build_ext.py" in writer["dir_made_by"] and writer["frontend"] == ""
    assert writer["remedy_status"].startswith("proven:")  # the compile in fresh directories, with the flag
    fix = culprit["remedy"]  # suggested by the campaign, in words: no build file carries the flag
    assert (fix["status"], fix["patch"]) == ("suggested", "")
    assert f"-ffile-prefix-map={writer['recorded_dir']}=." in fix["by_hand"] and writer["remedy_status"] in fix["why"]
    assert not Path(writer["cwd"]).exists()  # the traced build's directory: its wrapper removed it, nothing put it back
