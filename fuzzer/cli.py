"""The command line: click options → a frozen config → one pipeline call → exit code.

Exit codes (design.md): 0 reproducible · 1 unreproducible · 2 bad usage or input ·
3 the reference build failed · 4 no verdict (interrupted, fewer than two successful
builds) · 5 internal error (one line here, the traceback in a log file).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import sys
import tempfile
import traceback
from pathlib import Path

import click

from fuzzer.config import (MAX_INT, MAX_RUNS, MIN_SUCCESSFUL, FuzzConfig, Outputs, UsageError, available_cpus,
                           check_range, max_jobs, parse_duration, parse_stabilizers, shown)
from fuzzer import axes as axis_table
from fuzzer.plan import Perturbation, format_cpus, parse_cpus, parse_jobs_range
from fuzzer.settings import ConfiguredCommand
from fuzzer.settings import used as used_settings

EXIT_USAGE = 2
EXIT_INTERRUPTED = 4
EXIT_INTERNAL = 5


class _Path(click.Path):
    """A path option that refuses '': Path('') would silently mean the current directory."""

    def convert(self, value, param, ctx):
        if value == "":
            self.fail("must not be empty", param, ctx)
        return super().convert(value, param, ctx)


PATH = _Path(path_type=Path)
ID = click.IntRange(0, MAX_INT)  # run and campaign numbers: SQLite integers


def _remember_store(ctx: click.Context, param, value: Path) -> Path:
    """An internal error's traceback goes into the store, where the user looks for logs."""
    if isinstance(ctx.obj, dict):
        ctx.obj["store"] = value
    return value


store_option = click.option("--store", type=PATH, default=".buildfuzz", show_default=True, envvar="BUILDFUZZ_STORE",
                            callback=_remember_store, help="Store directory.")


def _command(words: tuple[str, ...]) -> str:
    """One word is a shell command line as typed; several are joined with quoting
    (a word that is safe apart from its {jobs} placeholder stays as typed)."""
    if len(words) == 1:
        return words[0]
    return " ".join(_quote(w) for w in words)


def _quote(word: str) -> str:
    plain = word.replace("{jobs}", "1")
    return word if shlex.quote(plain) == plain else shlex.quote(word)


def _default_jobs() -> str:
    return f"1-{max(8, 2 * len(os.sched_getaffinity(0)))}"


EXIT_CODES_HELP = """\b
Exit codes:
  0  reproducible: two or more successful builds, all identical
  1  unreproducible: builds differ, or one fails under some perturbation only
  2  bad usage or bad input (one line on stderr), or nothing was compared
  3  the reference build itself failed
  4  no verdict: interrupted, or fewer than two successful builds
  5  internal error (the traceback is in a log file)"""

RUN_EPILOG = """\b
Examples:
  buildfuzz run --runs 8 -- make -j{jobs}
  buildfuzz run --budget 5h --resume --report-json out.json -- ninja -j{jobs}

\b
Settings: every option can also be set as BUILDFUZZ_<OPTION> in the environment
(BUILDFUZZ_RUNS=40, BUILDFUZZ_REPORT_JSON=out.json, BUILDFUZZ_JITTER=false) or in the
source tree's buildfuzz.toml or pyproject.toml [tool.buildfuzz] (runs = 40,
command = "make -j{jobs}"); the command line wins, then the environment, then the file.

\b
Known findings: with --baseline FILE, or findings accepted with `buildfuzz accept`,
builds that differ only in known findings exit 0; a new finding exits 1.

""" + EXIT_CODES_HELP


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog="""\b
Example:
  buildfuzz run --runs 8 -- make -j{jobs}     fuzz the build in the current directory
  buildfuzz scenarios list                    the bundled example builds

""" + EXIT_CODES_HELP)
@click.version_option(package_name="buildfuzz")
def cli() -> None:
    """buildfuzz: rebuild under varied job counts, CPU affinities and timing jitter,
    hash every output, and name the step that makes the build unreproducible."""


@cli.command(cls=ConfiguredCommand, epilog=RUN_EPILOG)
@click.option("--source", type=PATH, default=".", show_default=True, help="Source tree to build.")
@click.option("--runs", type=int, default=20, show_default=True, help="Upper bound on builds.")
@click.option("--budget", help="Time budget (8h, 30m, 90s): plan runs to end inside it.")
@click.option("--seed", type=int, help="Campaign seed (random by default; printed and stored).")
@click.option("--artifact", multiple=True, help="Only compare files matching GLOB, as .gitignore does (repeatable).")
@click.option("--ignore", multiple=True, help="Never compare files matching GLOB, as .gitignore does (repeatable).")
@click.option("--default-ignore/--no-default-ignore", default=True,
              help="Leave build tools' logs (.ninja_log, ...) out of the comparison (on by default).")
@click.option("--jobs", default=None,
              help="Job count range, e.g. 1-16, at most max(256, 4×CPUs) [default: 1-max(8, 2×CPUs)].")
@click.option("--axes", default=",".join(axis_table.DEFAULT), show_default=True,
              help=f"Axes to vary (comma-separated), of: {', '.join(axis_table.BY_NAME)}.")
@click.option("--vary", default="", help=f"Also vary these environment axes (comma-separated): "
              f"{', '.join(axis_table.OPT_IN)}.")
@click.option("--jitter/--no-jitter", default=True, help="Perturb timing (on by default).")
@click.option("--affinity/--no-affinity", default=True, help="Vary the CPU set (on by default).")
@click.option("--timeout", type=float, help="Kill a build after SECONDS (counts as a failed run). Default: none for "
              "the reference build, max(10 x its wall time, 300 s) for every later run.")
@click.option("--in-place", is_flag=True, help="Build in the source tree itself (needs --clean).")
@click.option("--clean", help="Command that restores the source tree between in-place runs.")
@click.option("--resume", is_flag=True, help="Continue the latest campaign in the store.")
@click.option("--stop-on-first", is_flag=True, help="Stop at the first divergence or perturbed failure.")
@click.option("--localize/--no-localize", default=True, help="Localize the culprit steps (on by default).")
@click.option("--localize-budget", help="Time for localization (tracing, step replays, shrinking), e.g. 10m. Default: "
              "what --budget leaves, else 3 builds' time (at least 3 minutes).")
@click.option("--stabilizers", help="Stabiliser candidates to try, comma-separated (default: all of "
              "PYTHONHASHSEED, ASLR, SOURCE_DATE_EPOCH, PERL_HASH_SEED, clock, TZ, LC_ALL, HOME, umask).")
@click.option("--diff-timeout", type=float, default=30.0, show_default=True, help="Seconds for diffoscope per artifact.")
@click.option("--parallel", type=int, default=1, show_default=True,
              help="Builds at once, each in its own mount namespace at the same path (needs unshare; "
              "else one at a time). Concurrent builds perturb each other: jitter of its own.")
@click.option("--dask", help="Build on a Dask cluster: its scheduler's address (tcp://HOST:8786), or local:N for N "
              "worker processes here. Workers take builds by the resource 'builds' (dask worker --resources "
              "builds=1). Needs buildfuzz[dask] here and on every worker.")
@click.option("--shared-source", is_flag=True, help="With --dask: every worker reads --source at the same path (a "
              "shared file system) instead of receiving it as an archive.")
@click.option("--report-json", type=PATH, help="Write the JSON report here.")
@click.option("--junit", type=PATH, help="Write JUnit XML here.")
@click.option("--markdown", type=PATH, help="Write a Markdown summary here.")
@click.option("--html", type=PATH, help="Write a self-contained HTML report here.")
@click.option("--baseline", type=PATH, help="Known findings: a file from `buildfuzz baseline` or an earlier JSON "
              "report. Builds that differ only in them exit 0; a new finding exits 1.")
@store_option
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx, command, source, runs, budget, seed, artifact, ignore, default_ignore, jobs, axes, vary, jitter, affinity,
        timeout, in_place, clean, resume, stop_on_first, localize, localize_budget, stabilizers, diff_timeout,
        report_json, junit, markdown, html, baseline, store, quiet, parallel, dask, shared_source) -> None:
    """Fuzz BUILD COMMAND (after --; {jobs} is replaced by the job count)."""
    from fuzzer.campaign import run_campaign
    from fuzzer.findings import read_baseline
    from fuzzer.report.progress import ConsoleEvents

    switched_off = {axis for axis, on in (("jitter", jitter), ("cpus", affinity)) if not on}
    named = [a.strip() for a in f"{axes},{vary}".split(",") if a.strip()]
    axes_list = tuple(dict.fromkeys(a for a in named if a not in switched_off))
    config = FuzzConfig(
        source=source,
        command=_command(command),
        store=store,
        runs=runs,
        budget_s=parse_duration(budget) if budget is not None else None,
        seed=seed if seed is not None else random.SystemRandom().randrange(1 << 31),
        artifacts=artifact,
        ignore=ignore,
        default_ignore=default_ignore,
        jobs=_jobs(jobs if jobs is not None else _default_jobs()),
        axes=axes_list,
        timeout=timeout,
        in_place=in_place,
        clean=clean,
        resume=resume,
        localize=localize,
        localize_budget_s=parse_duration(localize_budget) if localize_budget is not None else None,
        stabilizers=parse_stabilizers(stabilizers) if stabilizers is not None else (),
        stop_on_first=stop_on_first,
        diff_timeout=diff_timeout,
        parallel=parallel,
        dask=dask,
        shared_source=shared_source,
        outputs=Outputs(report_json, junit, markdown, html),
        known=read_baseline(baseline) if baseline is not None else frozenset(),
    )
    _check_outputs(config.outputs)
    with ConsoleEvents(quiet=quiet, planned=config.runs) as events:
        outcome = run_campaign(config, events, settings=used_settings(ctx))
    _finish(outcome, config.outputs)


@cli.command(epilog="""\b
Examples:
  buildfuzz replay --run 7                       the perturbation of run 7 again
  buildfuzz replay --jobs 8 --cpus 0 --jitter 0.5 --jitter-seed 3

\b
Exit codes: 1 the divergence or failure reproduced, 0 the build matched the reference,
2 bad usage, 4 interrupted.""")
@store_option
@click.option("--campaign", type=ID, help="Campaign id (default: the latest).")
@click.option("--run", "index", type=ID, help="Run index to replay.")
@click.option("--jobs", type=int, help="Instead of --run: replay this job count ...")
@click.option("--cpus", help="... on this CPU list (e.g. 0-1,3) ...")
@click.option("--jitter", type=float, default=0.0, help="... with this jitter intensity ...")
@click.option("--jitter-seed", type=int, default=0, help="... and jitter seed ...")
@click.option("--vary", "variations", multiple=True, metavar="NAME=VALUE",
              help="... and this order or environment axis value (repeatable); compared with the reference.")
@click.option("--trace", is_flag=True, help="Also trace the replay with strace.")
def replay(store, campaign, index, jobs, cpus, jitter, jitter_seed, variations, trace) -> None:
    """Re-run one recorded run's exact perturbation (or a given one) and compare digests."""
    from fuzzer.replay import replay_run

    if (index is None) == (jobs is None):
        raise UsageError("replay needs either --run N or --jobs N [--cpus LIST --jitter X --jitter-seed S]")
    perturbation = _given_perturbation(jobs, cpus, jitter, jitter_seed, variations)
    result = replay_run(store, campaign, index, perturbation, trace=trace)
    click.echo(result.summary)
    sys.exit(1 if result.reproduced else 0)


@cli.command(epilog="""\b
Examples:
  buildfuzz explain --html report.html           the latest campaign's report as a page
  buildfuzz explain --campaign 3 --relocalize    compare and trace campaign 3 again

""" + EXIT_CODES_HELP)
@store_option
@click.option("--campaign", type=ID, help="Campaign id (default: the latest).")
@click.option("--report-json", type=PATH)
@click.option("--junit", type=PATH)
@click.option("--markdown", type=PATH)
@click.option("--html", type=PATH)
@click.option("--relocalize", is_flag=True,
              help="Compare the stored runs again and localize with traced builds, instead of showing the stored report.")
def explain(store, campaign, report_json, junit, markdown, html, relocalize) -> None:
    """Show a stored campaign's report again, in any format, without building."""
    from fuzzer.replay import explain_campaign

    outputs = Outputs(report_json, junit, markdown, html)
    _check_outputs(outputs)
    _finish(explain_campaign(store, campaign, relocalize), outputs)


@cli.command(epilog="""\b
Examples:
  buildfuzz accept                 the latest campaign's findings no longer fail a run
  buildfuzz accept --campaign 3

\b
Exit codes: 0 accepted, 2 bad usage (no store, no such campaign, no report).""")
@store_option
@click.option("--campaign", type=ID, help="Campaign id (default: the latest).")
def accept(store, campaign) -> None:
    """Mark a stored campaign's findings as known: later runs on this store exit 1 only
    on new findings (exit 0 when the builds differ only in accepted ones)."""
    from fuzzer import memory
    from fuzzer.report.terminal import safe_line

    accepted = memory.accept(store, campaign)
    click.echo(f"accepted {len(accepted)} finding(s); later runs on this store fail only on new ones")
    for finding in accepted:
        click.echo(safe_line(f"  {finding.id}  {finding.kind:<8}  {finding.what}"))


@cli.command(epilog="""\b
Example:
  buildfuzz baseline -o buildfuzz-baseline.json      commit it, then in CI:
  buildfuzz run --baseline buildfuzz-baseline.json -- make -j{jobs}

\b
Exit codes: 0 written, 2 bad usage (no store, no such campaign, no report, unwritable file).""")
@store_option
@click.option("--campaign", type=ID, help="Campaign id (default: the latest).")
@click.option("--output", "-o", type=PATH, required=True, help="Write the baseline file here.")
def baseline(store, campaign, output) -> None:
    """Write a stored campaign's findings to a baseline file for `buildfuzz run --baseline`."""
    from fuzzer import memory
    from fuzzer.report.terminal import safe_name

    _check_writable(output)
    data = memory.stored_baseline(store, campaign)
    output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    click.echo(f"{len(data['findings'])} finding(s) written to {safe_name(str(output))}")


@cli.group()
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
    _check_outputs(Outputs(report_json=report_json))
    found = find_scenarios(dirs + ((bundled_scenarios(),) if bundled else ()))
    scores = check_scenarios(found, runs=runs, seed=seed, progress=lambda line: click.echo(line, err=True))
    click.echo(render_table(scores))
    if report_json:
        report_json.write_text(json.dumps([s.to_json() for s in scores], indent=2))
    sys.exit(0 if all(s.passed for s in scores) else 1)


@scenarios.command("list")
def scenarios_list() -> None:
    """List the scenarios shipped with buildfuzz: small builds to try it on."""
    from fuzzer.scenarios import find_scenarios

    from fuzzer.report.terminal import safe_name

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
    package = Path(__file__).resolve().parent
    installed = package / "bundled_scenarios"
    return installed if installed.is_dir() else package.parent / "scenarios"


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the report that --report-json writes."""
    from fuzzer.report.schema import report_schema

    click.echo(json.dumps(report_schema(), indent=2))


@cli.command()
def doctor() -> None:
    """List the external tools buildfuzz uses and which are missing."""
    from fuzzer.tools import all_tools

    for tool in all_tools():
        status = tool.path() or f"missing (apt-get install {tool.package})"
        click.echo(f"{tool.name:<12} {status:<40} {tool.purpose}")


def _jobs(text: str) -> tuple[int, int]:
    try:
        return parse_jobs_range(text)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _given_perturbation(jobs: int | None, cpus: str | None, jitter: float, jitter_seed: int,
                        variations: tuple[str, ...] = ()) -> Perturbation | None:
    """replay's --jobs/--cpus/--jitter/--jitter-seed/--vary as one perturbation, each value checked."""
    if jobs is None:
        if cpus is not None or jitter or jitter_seed or variations:
            raise UsageError("--cpus, --jitter, --jitter-seed and --vary go with --jobs N, not with --run N")
        return None
    check_range("--jobs", jobs, 1, max_jobs())
    if not 0 <= jitter <= 1:  # also refuses nan
        raise UsageError(f"--jitter must be an intensity between 0 and 1, got {jitter}")
    check_range("--jitter-seed", jitter_seed, 0, MAX_INT)
    perturbation = Perturbation(jobs, _cpus(cpus), jitter, jitter_seed if jitter else 0)
    for text in variations:
        try:
            perturbation = perturbation.with_variation(*axis_table.parse_variation(text))
        except ValueError as e:
            raise UsageError(str(e)) from None
    return perturbation


def _cpus(text: str | None) -> tuple[int, ...]:
    if text is None:
        return available_cpus()
    try:
        cpus = parse_cpus(text)
    except ValueError:
        raise UsageError(f"--cpus expects a CPU list such as 0-3,6, got {shown(text)}") from None
    missing = sorted(set(cpus) - set(available_cpus()))
    if missing:
        raise UsageError(f"--cpus {shown(text)}: CPU {missing[0]} is not available here "
                         f"(available: {format_cpus(available_cpus())})")
    return cpus


def _check_outputs(outputs: Outputs) -> None:
    """Fail before the campaign, not after it: every report path must be writable."""
    for path in (outputs.report_json, outputs.junit, outputs.markdown, outputs.html):
        if path is not None:
            _check_writable(path)


def _check_writable(path: Path) -> None:
    # a report replaces its file by rename: a directory, /dev/null or a FIFO must not be replaced
    if os.path.lexists(path) and not os.path.isfile(path):
        raise UsageError(f"cannot write a report to {shown(path)}: it exists and is not a regular file")
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass  # the real write goes through a temporary file in the same directory
    except OSError as e:
        raise UsageError(f"cannot write a report to {shown(path)}: {e.strerror}") from None


def _finish(outcome, outputs: Outputs) -> None:
    """Print and write the report, say what it cannot, and exit with the outcome's code."""
    from fuzzer.report import write_outputs
    from fuzzer.report.terminal import safe_lines
    from fuzzer.report.text import render

    click.echo(render(outcome.report))
    write_outputs(outcome.report, outputs)
    if outcome.message:  # it may quote the build's log
        click.echo(safe_lines(f"buildfuzz: {outcome.message}"), err=True)
    sys.exit(outcome.exit_code)


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
        return _fail(EXIT_INTERRUPTED, "interrupted: no verdict")
    except click.ClickException as e:
        return _fail(EXIT_USAGE, "error: " + _click_message(e))
    except UsageError as e:
        return _fail(EXIT_USAGE, f"error: {e}")
    except Exception as e:  # a bug: one line for the user, the traceback for the bug report
        return _fail(EXIT_INTERNAL, f"internal error: {type(e).__name__}: {e} ({_log_traceback(state.get('store'))})")
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
    joined = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in joined)
