"""Settings from the command line, BUILDFUZZ_* variables and the source tree's file:
precedence, checking, and the record of where each came from."""

import json

from conftest import buildfuzz, make_project


def test_report_records_the_settings_used(tmp_path):
    source = make_project(tmp_path / "src", """
        all: out.txt
        out.txt:
            echo hello > $@
        """)
    (source / "buildfuzz.toml").write_text('command = "make -j{jobs}"\nruns = 3\njitter = false\n')
    report = tmp_path / "report.json"
    result = buildfuzz("run", "-q", "--no-localize", "--seed", "3", "--report-json", report, "--store",
                       tmp_path / "store", cwd=source, env={"BUILDFUZZ_AFFINITY": "false"})
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    assert len(data["runs"]) == 3 and data["command"] == "make -j{jobs}"
    assert all(run["perturbation"]["jitter"] == 0 for run in data["runs"])
    settings = data["settings"]
    assert settings["runs"] == {"value": 3, "source": "file", "origin": "buildfuzz.toml"}
    assert settings["affinity"] == {"value": False, "source": "environment", "origin": "BUILDFUZZ_AFFINITY"}
    assert settings["seed"] == {"value": 3, "source": "command line", "origin": "--seed"}
    assert settings["diff-timeout"] == {"value": 30.0, "source": "default", "origin": ""}
