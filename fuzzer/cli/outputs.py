"""Where the commands' reports go: checked writable before any build, printed and written
after, with the outcome's exit code."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

from fuzzer.config import STDOUT, Outputs, shown
from fuzzer.errors import UsageError


def check_outputs(outputs: Outputs) -> None:
    """Fail before the campaign, not after it: every report path must be writable."""
    if outputs.paths.count(STDOUT) > 1:
        raise UsageError("only one report can go to standard output (-)")
    for path in outputs.paths:
        if path is not None and path != STDOUT:
            check_writable(path)


def check_writable(path: Path) -> None:
    if path == STDOUT:
        raise UsageError("this file cannot go to standard output (-): give a path")
    # a report replaces its file by rename: a directory, /dev/null or a FIFO must not be replaced
    if os.path.lexists(path) and not os.path.isfile(path):
        raise UsageError(f"cannot write a report to {shown(path)}: it exists and is not a regular file")
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass  # the real write goes through a temporary file in the same directory
    except OSError as e:
        raise UsageError(f"cannot write a report to {shown(path)}: {e.strerror}") from None


def finish(outcome, outputs: Outputs) -> None:
    """Print and write the report, say what it cannot, and exit with the outcome's code."""
    from fuzzer.report import github, write_outputs
    from fuzzer.escaping import safe_lines
    from fuzzer.report.text import render

    click.echo(render(outcome.report), err=outputs.to_stdout)
    if os.environ.get("GITHUB_ACTIONS") == "true":  # workflow commands: read from the step's output
        workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
        for line in github.annotations(outcome.report, workspace):
            click.echo(line, err=outputs.to_stdout)
    write_outputs(outcome.report, outputs)
    if outcome.message:  # it may quote the build's log
        click.echo(safe_lines(f"buildfuzz: {outcome.message}"), err=True)
    sys.exit(outcome.exit_code)
