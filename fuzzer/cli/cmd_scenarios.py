"""`buildfuzz scenarios`: check scenario directories against their expectations, list and
find the bundled ones."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from fuzzer.cli.options import PATH
from fuzzer.cli.outputs import check_writable
from fuzzer.config import MAX_INT, MAX_RUNS, MIN_SUCCESSFUL, check_range, shown
from fuzzer.errors import UsageError

@click.group()
def scenarios() -> None:
    """Scenario directories: small builds with known (non)determinism."""


@scenarios.command("check", epilog="""\b
Examples:
  buildfuzz scenarios check --bundled           every scenario shipped with buildfuzz
  buildfuzz scenarios check my-scenarios/race   one directory holding a scenario.toml

\b
Exit codes: 0 every expectation met, 1 some failed, 2 a bad scenario file or option.""")
@click.argument("dirs", nargs=-1, type=PATH)
@click.option("--bundled", is_flag=True, help="Also check the scenarios shipped with buildfuzz.")
@click.option("--runs", type=int, default=None, help="Runs per scenario (default: the scenario's own, or 8).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--report-json", type=PATH, help="Write every scenario's score here.")
def scenarios_check(dirs, bundled, runs, seed, report_json) -> None:
    """Run scenario directories and score them against their [expect]."""
    from fuzzer.scenarios import check_scenarios, find_scenarios, render_table

    if not dirs and not bundled:
        raise UsageError("give scenario directories, or --bundled for the scenarios shipped with buildfuzz")
    if runs is not None:
        check_range("--runs", runs, MIN_SUCCESSFUL, MAX_RUNS)
    check_range("--seed", seed, 0, MAX_INT)
    if report_json is not None:
        check_writable(report_json)
    found = find_scenarios(dirs + ((bundled_scenarios(),) if bundled else ()))
    scores = check_scenarios(found, runs=runs, seed=seed, progress=lambda line: click.echo(line, err=True))
    click.echo(render_table(scores))
    if report_json:
        report_json.write_text(json.dumps([s.to_json() for s in scores], indent=2))
    sys.exit(0 if all(s.passed for s in scores) else 1)


@scenarios.command("list")
def scenarios_list() -> None:
    """List the scenarios shipped with buildfuzz: small builds to try it on."""
    from fuzzer.escaping import safe_name
    from fuzzer.scenarios import find_scenarios

    found = find_scenarios([bundled_scenarios()])
    width = max(len(s.name) for s in found)
    click.echo(f"bundled scenarios in {safe_name(str(bundled_scenarios()))}:")
    for scenario in found:
        summary = scenario.description if len(scenario.description) <= 80 else scenario.description[:77] + "..."
        click.echo(f"  {scenario.name:<{width}}  {scenario.expect.verdict:<14}  {safe_name(summary)}")
    click.echo("try one: buildfuzz run --source \"$(buildfuzz scenarios path peachpy-aslr)\" --runs 6 -- make -j{jobs}")


@scenarios.command("path")
@click.argument("name")
def scenarios_path(name) -> None:
    """Print the directory of the bundled scenario NAME."""
    path = bundled_scenarios() / name
    if "/" in name or name in ("", ".", "..") or not (path / "scenario.toml").is_file():
        raise UsageError(f"no bundled scenario {shown(name)}; `buildfuzz scenarios list` shows them")
    click.echo(str(path))


def bundled_scenarios() -> Path:
    """Inside an installed package (setup.py copies scenarios/ there), else the checkout's scenarios/."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "bundled_scenarios"
    return installed if installed.is_dir() else package.parent / "scenarios"
