"""The command line: click options → a frozen config → one pipeline call → exit code.

Exit codes: 0 reproducible · 1 unreproducible · 2 bad usage or input · 3 the reference
build failed · 4 no verdict (interrupted, fewer than two successful builds) · 5 internal
error (one line here, the traceback in a log file).

One module per command group: `cmd_run` (fuzz a build), `cmd_stored` (replay, explain,
accept, baseline), `cmd_bisect`, `cmd_scenarios`, `cmd_info` (schema, doctor), `cmd_fix`; `options` and
`outputs` are what they share.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

import click

from fuzzer.cli.cmd_bisect import bisect
from fuzzer.cli.cmd_fix import fix
from fuzzer.cli.cmd_info import doctor, schema
from fuzzer.cli.cmd_run import run
from fuzzer.cli.cmd_scenarios import scenarios
from fuzzer.cli.cmd_stored import accept, baseline, explain, replay
from fuzzer.cli.options import EXIT_CODES_HELP
from fuzzer import __version__
from fuzzer.errors import UsageError
from fuzzer.escaping import safe_name
from fuzzer.model import ExitCode


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog="""\b
Example:
  buildfuzz run --runs 8 -- make -j{jobs}     fuzz the build in the current directory
  buildfuzz scenarios list                    the bundled example builds

""" + EXIT_CODES_HELP)
@click.version_option(version=__version__, prog_name="buildfuzz")
def cli() -> None:
    """buildfuzz: rebuild under varied job counts, CPU affinities and timing jitter,
    hash every output, and name the step that makes the build unreproducible."""


for command in (run, replay, explain, accept, baseline, fix, bisect, scenarios, schema, doctor):
    cli.add_command(command)


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    sys.exit(run_cli(sys.argv[1:]))


def run_cli(args: list[str]) -> int:
    """The exit code for one command line; a command that decides its own ends with sys.exit."""
    state: dict[str, Path] = {}  # filled while parsing: where an internal error is logged
    try:
        result = cli.main(args=args, standalone_mode=False, prog_name="buildfuzz", obj=state)
    except (KeyboardInterrupt, click.exceptions.Abort):
        return _fail(ExitCode.NO_VERDICT, "interrupted: no verdict")
    except click.ClickException as e:
        return _fail(ExitCode.USAGE, "error: " + _click_message(e))
    except UsageError as e:
        return _fail(ExitCode.USAGE, f"error: {e}")
    except Exception as e:  # a bug: one line for the user, the traceback for the bug report
        return _fail(ExitCode.INTERNAL, f"internal error: {type(e).__name__}: {e} ({_log_traceback(state.get('store'))})")
    return result if isinstance(result, int) else 0


def _click_message(e: click.ClickException) -> str:
    message = e.format_message()
    if isinstance(e, click.NoSuchOption) and e.ctx is not None and e.ctx.command is run:
        message += " (the build command goes after --, e.g. buildfuzz run --runs 8 -- make -j{jobs})"
    return message


def _log_traceback(store: Path | None) -> str:
    """Write the current exception's traceback into the store if it exists, else a temp file."""
    directory = store.absolute() if store is not None and os.path.isdir(store) else None
    prefix = "internal-error-" if directory else "buildfuzz-internal-error-"
    try:
        fd, path = tempfile.mkstemp(prefix=prefix, suffix=".log", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as log:
            log.write(traceback.format_exc())
    except OSError as e:
        return f"no log written: {e.strerror}"
    return f"details in {path}"


def _fail(code: int, message: str) -> int:
    click.echo(f"buildfuzz: {_one_line(message)}", err=True)
    return code


def _one_line(text: str) -> str:
    """Errors are one line: no forged lines, no terminal escape sequences from user input."""
    return safe_name(" | ".join(line.strip() for line in text.splitlines() if line.strip()))
