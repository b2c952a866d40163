"""The CI examples and the composite action work as written: their YAML parses, their shell
steps run (with a stand-in `buildfuzz` that records its arguments) and every buildfuzz
command line they make parses with the real CLI; budgets fit the runners' caps; buildfuzz
comes from a pinned source, never from PyPI; the store is kept; the verdict fails the job."""

import os
import re
import stat
import subprocess
from pathlib import Path

import click
import pytest
import yaml

from conftest import ROOT
from fuzzer.cli import run
from fuzzer.config import parse_duration

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
GITHUB = yaml.safe_load((ROOT / "examples" / "github-actions.yml").read_text())
GITLAB = yaml.safe_load((ROOT / "examples" / "gitlab-ci.yml").read_text())["buildfuzz-nightly"]
GITHUB_CAP_S = 6 * 3600  # GitHub-hosted runners stop a job after 6 h
GITLAB_CAP_S = 3 * 3600  # GitLab.com's hosted runners after 3 h
SETUP_S = 600  # installing, restoring and saving the store, uploading reports
STUB = """#!/bin/bash
# stands in for buildfuzz: records its arguments, writes a report if asked, exits as told
printf '%s\\0' "$@" > "$STUB_CALLS/$(ls "$STUB_CALLS" | wc -l)"
previous=""
for arg in "$@"; do
  if [ "$previous" = --report-json ] && [ -n "${STUB_VERDICT:-}" ]; then
    printf '{"verdict": "%s"}' "$STUB_VERDICT" > "$arg"
  fi
  previous="$arg"
done
exit "${STUB_EXIT:-0}"
"""


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """Runs a CI script in a fresh work directory with the stand-in buildfuzz first on PATH."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "calls").mkdir()
    (tmp_path / "work").mkdir()
    stub = tmp_path / "bin" / "buildfuzz"
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    monkeypatch.chdir(tmp_path / "work")  # --source . is the work directory, holding no settings file

    def run_script(script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
        environment = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path),
                       "STUB_CALLS": str(tmp_path / "calls"), **env}
        # as both runners run a bash step: GitHub's `shell: bash` is `bash --noprofile --norc -eo
        # pipefail {0}`, and GitLab's runner opens its bash scripts with `set -eo pipefail`
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                              cwd=tmp_path / "work", env=environment,
                              capture_output=True, text=True, timeout=60)

    run_script.calls = lambda: [(tmp_path / "calls" / name).read_text().split("\0")[:-1]
                                for name in sorted(os.listdir(tmp_path / "calls"), key=int)]
    run_script.work = tmp_path / "work"
    return run_script


def parsed(argv: list[str]) -> click.Context:
    """The context the real `buildfuzz run` would build from these arguments (no build runs)."""
    assert argv[0] == "run", argv
    return run.make_context("run", argv[1:])


def assert_fits(ctx: click.Context, job_timeout_s: float, cap_s: float) -> None:
    budget_s, build_s = parse_duration(ctx.params["budget"]), ctx.params["timeout"]
    assert budget_s + build_s + SETUP_S <= job_timeout_s <= cap_s, (budget_s, build_s, job_timeout_s)


# -- GitLab CI --------------------------------------------------------------------------

def test_gitlab_job_runs_a_command_line_the_cli_accepts_within_the_cap(shell):
    result = shell("\n".join(GITLAB["script"]), GITLAB["variables"])
    assert result.returncode == 0, result.stderr
    [argv] = shell.calls()
    ctx = parsed(argv)
    assert ctx.params["command"] == ("make -j{jobs}",) and not ctx.params["resume"]
    assert_fits(ctx, parse_duration(GITLAB["timeout"].replace(" ", "")), GITLAB_CAP_S)


def test_gitlab_job_resumes_from_the_cached_store_and_keeps_it(shell):
    (shell.work / "buildfuzz-store").mkdir()
    (shell.work / "buildfuzz-store" / "buildfuzz.sqlite").touch()
    shell("\n".join(GITLAB["script"]), GITLAB["variables"])
    ctx = parsed(shell.calls()[0])
    assert ctx.params["resume"]
    store = str(ctx.params["store"])
    assert GITLAB["cache"]["when"] == "always" and [p.rstrip("/") for p in GITLAB["cache"]["paths"]] == [store]


def test_gitlab_job_fails_on_an_unreproducible_verdict_and_keeps_the_reports(shell):
    result = shell("set -e\n" + "\n".join(GITLAB["script"]), {**GITLAB["variables"], "STUB_EXIT": "1"})
    assert result.returncode == 1  # GitLab stops the script at the first failing line
    ctx = parsed(shell.calls()[0])
    assert GITLAB["artifacts"]["when"] == "always"
    assert GITLAB["artifacts"]["reports"]["junit"] == str(ctx.params["junit"])
    kept = [p.rstrip("/") for p in GITLAB["artifacts"]["paths"]]
    for report in ("report_json", "junit", "markdown", "html"):
        assert str(Path(ctx.params[report]).parent) in kept


def test_gitlab_job_installs_a_pinned_buildfuzz_not_pypi():
    source = GITLAB["variables"]["INSTALL_BUILDFUZZ"]
    assert re.fullmatch(r"buildfuzz @ git\+https://\S+\.git@(COMMIT|[0-9a-f]{40})", source)
    assert any('pip install -q "$INSTALL_BUILDFUZZ"' in line for line in GITLAB["before_script"])
    assert not any(re.search(r"pip install\s+(-\S+\s+)*buildfuzz\b", line) for line in GITLAB["before_script"])


# -- GitHub Actions: the example and the composite action ------------------------------

def example_step() -> dict:
    [step] = [s for s in GITHUB["jobs"]["fuzz"]["steps"] if s.get("uses", "").startswith("OWNER/buildfuzz@")]
    return step


def action_step(name: str) -> dict:
    [step] = [s for s in ACTION["runs"]["steps"] if s["name"] == name]
    return step


def inputs_of(step: dict) -> dict[str, str]:
    """The action's inputs as the example sets them, the rest at their defaults."""
    values = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    return {**values, **{name: str(value) for name, value in step.get("with", {}).items()}}


def step_env(step: dict, inputs: dict[str, str], **extra: str) -> dict[str, str]:
    """The step's env: with `${{ inputs.NAME }}` replaced as GitHub would."""
    def expand(value: str) -> str:
        return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m[1]], str(value))
    return {name: expand(value) for name, value in step.get("env", {}).items()} | extra


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_the_example_sets_only_inputs_the_action_has():
    step = example_step()
    assert set(step["with"]) <= set(ACTION["inputs"])
    assert "verdict" in ACTION["outputs"]


def test_github_example_runs_a_command_line_the_cli_accepts_within_the_cap(shell, tmp_path):
    inputs = inputs_of(example_step())
    out = tmp_path / "github-output"
    result = shell(action_step("Fuzz the build")["run"],
                   step_env(action_step("Fuzz the build"), inputs, GITHUB_OUTPUT=str(out)))
    assert result.returncode == 0, result.stderr
    [argv] = shell.calls()
    ctx = parsed(argv)
    assert ctx.params["command"] == ("make -j{jobs}",)
    assert_fits(ctx, GITHUB["jobs"]["fuzz"]["timeout-minutes"] * 60, GITHUB_CAP_S)
    assert outputs(out) == {"exit-code": "0", "verdict": "none"}


def test_the_action_resumes_and_reports_the_verdict(shell, tmp_path):
    inputs = inputs_of(example_step())
    (shell.work / inputs["store"]).mkdir()
    (shell.work / inputs["store"] / "buildfuzz.sqlite").touch()
    out = tmp_path / "github-output"
    env = step_env(action_step("Fuzz the build"), inputs, GITHUB_OUTPUT=str(out), STUB_EXIT="1",
                   STUB_VERDICT="unreproducible")
    assert shell(action_step("Fuzz the build")["run"], env).returncode == 0  # the store is saved before failing
    assert parsed(shell.calls()[0]).params["resume"]
    assert outputs(out) == {"exit-code": "1", "verdict": "unreproducible"}


@pytest.mark.parametrize("code, verdict", [("0", "reproducible"), ("1", "unreproducible"), ("3", "reference-failed")])
def test_the_fuzz_step_records_every_exit_code_under_bash_e(shell, tmp_path, code, verdict):
    inputs = inputs_of(example_step())
    out = tmp_path / "github-output"
    env = step_env(action_step("Fuzz the build"), inputs, GITHUB_OUTPUT=str(out), STUB_EXIT=code, STUB_VERDICT=verdict)
    assert shell(action_step("Fuzz the build")["run"], env).returncode == 0
    assert outputs(out) == {"exit-code": code, "verdict": verdict}


@pytest.mark.parametrize("code, fail_on_unreproducible, job_code", [
    ("1", "true", 1), ("1", "false", 0), ("0", "true", 0), ("2", "false", 2), ("", "true", 5),
])
def test_the_verdict_step_fails_the_job_on_an_unreproducible_verdict(shell, code, fail_on_unreproducible, job_code):
    step = action_step("Verdict")
    inputs = {**inputs_of(example_step()), "fail-on-unreproducible": fail_on_unreproducible}
    env = step_env(step, inputs) | {"CODE": code}
    assert shell(step["run"], env).returncode == job_code


def test_empty_inputs_leave_the_settings_to_the_file(shell, tmp_path):
    inputs = {**inputs_of(example_step()), "command": "", "budget": "", "runs": "", "timeout": ""}
    (shell.work / "buildfuzz.toml").write_text('command = "ninja -j{jobs}"\nbudget = "1h"\n')
    env = step_env(action_step("Fuzz the build"), inputs, GITHUB_OUTPUT=str(tmp_path / "out"))
    shell(action_step("Fuzz the build")["run"], env)
    ctx = parsed(shell.calls()[0])
    assert ctx.params["command"] == ("ninja -j{jobs}",) and ctx.params["budget"] == "1h"


def test_another_command_or_settings_file_picks_another_store(shell, tmp_path):
    step = action_step("Name the store's cache")

    def prefix(**inputs) -> str:
        out = tmp_path / "out"
        out.unlink(missing_ok=True)
        env = step_env(step, {**inputs_of(example_step()), **inputs}, GITHUB_OUTPUT=str(out), RUNNER_OS="Linux")
        assert shell(step["run"], env).returncode == 0
        return outputs(out)["prefix"]

    first = prefix()
    assert first.startswith("buildfuzz-store-Linux-") and prefix() == first
    assert prefix(command="ninja -j{jobs}") != first
    (shell.work / "pyproject.toml").write_text("[tool.buildfuzz]\nruns = 3\n")
    assert prefix() != first


def test_the_action_keeps_the_store_and_the_reports_whatever_the_verdict():
    restore, save = action_step("Restore the store"), action_step("Keep the store for the next run")
    assert restore["uses"].startswith("actions/cache/restore@") and save["uses"].startswith("actions/cache/save@")
    assert restore["with"]["path"] == save["with"]["path"] == "${{ inputs.store }}"
    assert restore["with"]["key"] == save["with"]["key"]
    upload = action_step("Upload the reports")
    assert save["if"].startswith("always()") and upload["if"].startswith("always()")
    assert upload["with"]["include-hidden-files"] is True


def test_the_action_installs_buildfuzz_from_its_own_checkout():
    install = action_step("Install buildfuzz")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip" install -q "$ACTION_PATH"' in install["run"]


def test_every_expression_names_an_input_or_a_step_that_exists():
    text = (ROOT / "action.yml").read_text()
    assert set(re.findall(r"inputs\.([\w-]+)", text)) <= set(ACTION["inputs"])
    ids = {step.get("id") for step in ACTION["runs"]["steps"]}
    assert set(re.findall(r"steps\.([\w-]+)\.outputs", text)) <= ids
    example = (ROOT / "examples" / "github-actions.yml").read_text()
    assert set(re.findall(r"steps\.buildfuzz\.outputs\.([\w-]+)", example)) <= set(ACTION["outputs"])


def test_the_verdict_output_names_every_verdict():
    from fuzzer.model import Verdict

    described = ACTION["outputs"]["verdict"]["description"]
    assert all(verdict in described for verdict in Verdict)
