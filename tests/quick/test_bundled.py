"""The bundled scenarios are reachable by name from the command line (an installed wheel
carries them as fuzzer/bundled_scenarios; .ci/run checks that from a fresh venv)."""

from conftest import SCENARIOS, buildfuzz, buildfuzz_in_process
from fuzzer.scenarios import find_scenarios


def test_list_names_every_bundled_scenario_with_its_verdict():
    result = buildfuzz("scenarios", "list")  # a real process: the entry point, as a user starts it
    assert result.returncode == 0, result.stderr
    for scenario in find_scenarios([SCENARIOS]):
        assert any(line.split()[:2] == [scenario.name, scenario.expect.verdict] for line in result.stdout.splitlines())


def test_path_prints_a_scenario_directory():
    result = buildfuzz_in_process("scenarios", "path", "peachpy-aslr")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(SCENARIOS / "peachpy-aslr")


def test_unknown_names_and_missing_directories_are_usage_errors():
    for args in (("path", "nope"), ("path", "../scenarios"), ("path", ""), ("check",)):
        result = buildfuzz_in_process("scenarios", *args)
        assert result.returncode == 2, args
        assert result.stderr.count("\n") == 1 and result.stdout == ""
