"""`buildfuzz run`: fuzz a build command, from options, BUILDFUZZ_* variables and the
source tree's settings file, into one campaign."""

from __future__ import annotations

import os
import random
import shlex

import click

from fuzzer import axes as axis_table
from fuzzer.cli.options import CHECK_STEPS, DURATION, EXIT_CODES_HELP, JOBS_RANGE, PATH, RATE, STABILIZERS, store_option
from fuzzer.cli.outputs import check_outputs, finish
from fuzzer.config import FuzzConfig, Outputs
from fuzzer.settings import ConfiguredCommand
from fuzzer.settings import used as used_settings

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


@click.command(cls=ConfiguredCommand, epilog=RUN_EPILOG)
@click.option("--source", type=PATH, default=".", show_default=True, help="Source tree to build.")
@click.option("--runs", type=int, default=20, show_default=True, help="Upper bound on builds.")
@click.option("--budget", type=DURATION, help="Time budget (8h, 30m, 90s): plan runs to end inside it.")
@click.option("--seed", type=int, help="Campaign seed (random by default; printed and stored).")
@click.option("--artifact", multiple=True, help="Only compare files matching GLOB, as .gitignore does (repeatable).")
@click.option("--ignore", multiple=True, help="Never compare files matching GLOB, as .gitignore does (repeatable).")
@click.option("--output", type=PATH, multiple=True, metavar="DIR",
              help="Also compare DIR, outside the tree, that the build writes into: emptied before every run "
              "(repeatable). What the build leaves beside its tree (../*.deb) is always compared.")
@click.option("--count-bookkeeping", "--no-default-ignore", "count_bookkeeping", is_flag=True,
              help="Let build systems' bookkeeping (.ninja_log, meson-logs/, CMake's and configure's logs) decide "
              "the verdict like any file, and name its writers. Without it, it is compared and said in one line. "
              "--no-default-ignore is its older name.")
@click.option("--jobs", type=JOBS_RANGE, default=None,
              help="Job count range, e.g. 1-16, at most max(256, 4×CPUs) [default: 1-max(8, 2×CPUs)].")
@click.option("--axes", default=",".join(axis_table.DEFAULT), show_default=True,
              help=f"Axes to vary (comma-separated), of: {', '.join(axis_table.BY_NAME)}.")
@click.option("--vary", default="", help=f"Also vary these environment axes (comma-separated): "
              f"{', '.join(axis_table.OPT_IN)}; `all`: every one (those that cannot run here are off, and the report says why).")
@click.option("--jitter/--no-jitter", default=True, help="Perturb timing (on by default).")
@click.option("--affinity/--no-affinity", default=True, help="Vary the CPU set (on by default).")
@click.option("--timeout", type=float, help="Kill a build after SECONDS (counts as a failed run). Default: none for "
              "the reference build, max(10 x its wall time, 300 s) for every later run.")
@click.option("--in-place", is_flag=True, help="Build in the source tree itself (needs --clean).")
@click.option("--clean", help="Command that restores the source tree between in-place runs.")
@click.option("--resume", is_flag=True, help="Continue the latest campaign in the store.")
@click.option("--until-confidence", type=RATE, help="Keep building past --runs until the clean builds bound the "
              "chance of a divergence per build below RATE at 95% (5% needs 59), or the budget ends; a "
              "divergence ends it as usual.")
@click.option("--stop-on-first", is_flag=True, help="Stop at the first divergence or perturbed failure.")
@click.option("--localize/--no-localize", default=True, help="Localize the culprit steps (on by default).")
@click.option("--localize-budget", type=DURATION, help="Time for localization (tracing, step replays, shrinking), e.g. 10m. Default: "
              "what --budget leaves, else 3 builds' time (at least 3 minutes).")
@click.option("--stabilizers", type=STABILIZERS, help="Stabiliser candidates to try, comma-separated (default: all of "
              "PYTHONHASHSEED, ASLR, SOURCE_DATE_EPOCH, PERL_HASH_SEED, clock, TZ, LC_ALL, HOME, umask).")
@click.option("--check-steps", type=CHECK_STEPS, help="Step audit: replay this share of the traced build's steps alone (all, 10%, "
              "0.1), the least recently audited first; a step that varies is a culprit without a second build.")
@click.option("--diff-timeout", type=float, default=30.0, show_default=True, help="Seconds for diffoscope per artifact.")
@click.option("--parallel", type=int, default=1, show_default=True,
              help="Builds at once, each in its own mount namespace at the same path (needs unshare; "
              "else one at a time). Concurrent builds perturb each other: jitter of its own.")
@click.option("--dask", help="Build on a Dask cluster: its scheduler's address (tcp://HOST:8786), or local:N for N "
              "worker processes here. Workers take builds by the resource 'builds' (dask worker --resources "
              "builds=1). Needs buildfuzz[dask] here and on every worker.")
@click.option("--shared-source", is_flag=True, help="With --dask: every worker reads --source at the same path (a "
              "shared file system) instead of receiving it as an archive.")
@click.option("--report-json", type=PATH, help="Write the JSON report here (- for standard output: the terminal report then goes to stderr).")
@click.option("--junit", type=PATH, help="Write JUnit XML here.")
@click.option("--markdown", type=PATH, help="Write a Markdown summary here.")
@click.option("--html", type=PATH, help="Write a self-contained HTML report here.")
@click.option("--baseline", type=PATH, help="Known findings: a file from `buildfuzz baseline` or an earlier JSON "
              "report. Builds that differ only in them exit 0; a new finding exits 1.")
@store_option
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary.")
@click.option("--verbose", "-v", is_flag=True, help="Unfold the summary: every variant, step, failed run's log "
              "tail, finding and the whole evidence (the JSON report always has them).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx, command, source, runs, budget, seed, artifact, ignore, output, count_bookkeeping, jobs, axes, vary, jitter, affinity,
        timeout, in_place, clean, resume, until_confidence, stop_on_first, localize, localize_budget, stabilizers, diff_timeout,
        check_steps,
        report_json, junit, markdown, html, baseline, store, quiet, verbose, parallel, dask, shared_source) -> None:
    """Fuzz BUILD COMMAND (after --; {jobs} is replaced by the job count)."""
    from fuzzer.campaign import run_campaign
    from fuzzer.report.baseline import read_baseline
    from fuzzer.report.progress import ConsoleEvents

    switched_off = {axis for axis, on in (("jitter", jitter), ("cpus", affinity)) if not on}
    named = axis_table.with_all([a.strip() for a in f"{axes},{vary}".split(",") if a.strip()])
    axes_list = tuple(dict.fromkeys(a for a in named if a not in switched_off))
    config = FuzzConfig(
        source=source,
        command=_command(command),
        store=store,
        runs=runs,
        budget_s=budget.seconds if budget is not None else None,
        seed=seed if seed is not None else random.SystemRandom().randrange(1 << 31),
        artifacts=artifact,
        ignore=ignore,
        output_dirs=output,
        count_bookkeeping=count_bookkeeping,
        jobs=(jobs if jobs is not None else JOBS_RANGE.read(_default_jobs())).bounds,
        axes=axes_list,
        timeout=timeout,
        in_place=in_place,
        clean=clean,
        resume=resume,
        localize=localize,
        localize_budget_s=localize_budget.seconds if localize_budget is not None else None,
        stabilizers=stabilizers.names if stabilizers is not None else (),
        check_steps=check_steps.share if check_steps is not None else None,
        stop_on_first=stop_on_first,
        until_confidence=until_confidence.value if until_confidence is not None else None,
        diff_timeout=diff_timeout,
        parallel=parallel,
        dask=dask,
        shared_source=shared_source,
        outputs=Outputs(report_json, junit, markdown, html),
        known=read_baseline(baseline) if baseline is not None else frozenset(),
    )
    check_outputs(config.outputs)
    with ConsoleEvents(quiet=quiet, planned=config.runs, budget_s=config.budget_s, parallel=config.parallel) as events:
        outcome = run_campaign(config, events, settings=used_settings(ctx))
    finish(outcome, config.outputs, verbose)


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
