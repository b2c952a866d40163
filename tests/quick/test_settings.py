"""Settings from the command line, BUILDFUZZ_* variables and the source tree's file:
precedence, checking, and the record of where each came from."""

import os

import click
import pytest

from fuzzer.cli import run
from fuzzer.errors import UsageError
from fuzzer.settings import used

from conftest import buildfuzz, buildfuzz_in_process


@pytest.fixture(autouse=True)
def no_buildfuzz_variables(monkeypatch):
    for name in [n for n in os.environ if n.startswith("BUILDFUZZ_")]:
        monkeypatch.delenv(name)


def parse(*args: str) -> click.Context:
    """What `buildfuzz run ARGS` would run with, without running anything."""
    return run.make_context("run", list(args))


def pyproject(directory, text: str):
    directory.mkdir(exist_ok=True)
    (directory / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.buildfuzz]\n{text}\n")
    return directory


def test_defaults_when_nothing_is_set(tmp_path):
    ctx = parse("--source", str(tmp_path), "--", "make")
    assert ctx.params["runs"] == 20
    settings = used(ctx)
    assert settings["runs"] == {"value": 20, "source": "default", "origin": ""}
    assert settings["source"] == {"value": str(tmp_path), "source": "command line", "origin": "--source"}
    assert settings["command"] == {"value": ["make"], "source": "command line", "origin": "after --"}


def test_command_line_beats_environment_beats_file(tmp_path, monkeypatch):
    source = pyproject(tmp_path / "src", "runs = 3\nseed = 5\nbudget = '1h'\njitter = false")
    monkeypatch.setenv("BUILDFUZZ_RUNS", "4")
    monkeypatch.setenv("BUILDFUZZ_SEED", "6")
    ctx = parse("--source", str(source), "--runs", "7", "--", "make")
    assert (ctx.params["runs"], ctx.params["seed"], ctx.params["budget"], ctx.params["jitter"]) == (7, 6, "1h", False)
    settings = used(ctx)
    assert settings["runs"]["source"] == "command line"
    assert settings["seed"] == {"value": 6, "source": "environment", "origin": "BUILDFUZZ_SEED"}
    assert settings["budget"]["source"] == "file"
    assert settings["budget"]["origin"] == f"{source / 'pyproject.toml'} [tool.buildfuzz]"
    assert settings["timeout"]["source"] == "default"


def test_the_file_is_found_through_the_environments_source(tmp_path, monkeypatch):
    source = pyproject(tmp_path / "src", "runs = 3")
    monkeypatch.setenv("BUILDFUZZ_SOURCE", str(source))
    assert parse("--", "make").params["runs"] == 3


def test_buildfuzz_toml_and_the_build_command_from_the_file(tmp_path):
    (tmp_path / "buildfuzz.toml").write_text('command = "make -j{jobs} all"\nartifact = ["out/*.so"]\n')
    ctx = parse("--source", str(tmp_path))
    assert ctx.params["command"] == ("make -j{jobs} all",)
    assert ctx.params["artifact"] == ("out/*.so",)


def test_file_paths_are_relative_to_the_file(tmp_path):
    source = pyproject(tmp_path / "src", "report-json = 'out/report.json'\nstore = '.bf'")
    ctx = parse("--source", str(source), "--", "make")
    assert ctx.params["report_json"] == source / "out" / "report.json"
    assert ctx.params["store"] == source / ".bf"


def test_a_pyproject_without_our_table_sets_nothing(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert used(parse("--source", str(tmp_path), "--", "make"))["runs"]["source"] == "default"


@pytest.mark.parametrize("text, message", [
    ("runz = 3", "unknown key 'runz'"),
    ("report_json = 'x'", "did you mean 'report-json'"),
    ("source = 'elsewhere'", "key 'source' is set by --source"),
    ("runs = 3.5", "runs must be a whole number, got 3.5"),
    ("runs = true", "runs must be a whole number, got true"),
    ("jitter = 'no'", "jitter must be true or false"),
    ("artifact = '*.so'", "artifact must be a list of strings"),
    ("timeout = 'soon'", "timeout must be a number"),
    ("store = ''", "store must not be empty"),
    ("[tool.buildfuzz.nested]", "unknown key 'nested'"),
])
def test_bad_file_settings_name_file_and_key(tmp_path, text, message):
    source = pyproject(tmp_path / "src", text)
    # a long temporary path is shown shortened, "(N characters)" after it (xdist's are longer)
    with pytest.raises(UsageError, match=r"pyproject.toml \[tool.buildfuzz\]( \(\d+ characters\))?': ") as error:
        parse("--source", str(source), "--", "make")
    assert message in str(error.value)


def test_two_files_with_settings_are_refused(tmp_path):
    source = pyproject(tmp_path / "src", "runs = 3")
    (source / "buildfuzz.toml").write_text("runs = 4\n")
    with pytest.raises(UsageError, match="keep one"):
        parse("--source", str(source), "--", "make")


def test_broken_toml_is_a_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool\n")
    with pytest.raises(UsageError, match="not valid UTF-8 TOML"):
        parse("--source", str(tmp_path), "--", "make")


def test_an_unknown_variable_is_a_warning_and_a_bad_value_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BUILDFUZZ_RUNZ", "3")
    assert parse("--source", str(tmp_path), "--", "make").params["runs"] == 20
    assert "warning: BUILDFUZZ_RUNZ is not a setting of buildfuzz run (ignored)" in capsys.readouterr().err
    monkeypatch.setenv("BUILDFUZZ_RUNS", "many")
    with pytest.raises(UsageError, match="BUILDFUZZ_RUNS='many'"):
        parse("--source", str(tmp_path), "--", "make")


def test_cli_errors_are_one_line_exit_2_and_leave_no_store(tmp_path):
    source = pyproject(tmp_path / "src", "runz = 3")
    result = buildfuzz_in_process("run", "--", "make", cwd=source)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "unknown key 'runz'" in result.stderr
    assert sorted(p.name for p in source.iterdir()) == ["pyproject.toml"]


def test_shell_completion_works_even_beside_a_broken_settings_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.buildfuzz]\nrunz = 3\n")
    result = buildfuzz(cwd=tmp_path, env={"_BUILDFUZZ_COMPLETE": "bash_complete", "COMP_WORDS": "buildfuzz run --so",
                                          "COMP_CWORD": "2"})
    assert result.returncode == 0 and result.stdout.split() == ["plain,--source"], result.stderr


def test_count_bookkeeping_from_the_file_the_environment_and_its_older_name(tmp_path, monkeypatch):
    assert parse("--source", str(tmp_path), "--", "make").params["count_bookkeeping"] is False
    source = pyproject(tmp_path / "src", "count-bookkeeping = true")
    assert used(parse("--source", str(source), "--", "make"))["count-bookkeeping"]["source"] == "file"
    assert parse("--source", str(source), "--", "make").params["count_bookkeeping"] is True
    assert parse("--source", str(tmp_path), "--no-default-ignore", "--", "make").params["count_bookkeeping"] is True
    monkeypatch.setenv("BUILDFUZZ_COUNT_BOOKKEEPING", "1")
    assert parse("--source", str(tmp_path), "--", "make").params["count_bookkeeping"] is True
