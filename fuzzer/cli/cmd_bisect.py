"""`buildfuzz bisect`: the first commit between --good and --bad that shows a finding."""

from __future__ import annotations

import sys
from dataclasses import replace

import click

from fuzzer.cli.options import PATH, RATE, store_option
from fuzzer.errors import UsageError
from fuzzer.escaping import shown
from fuzzer.findings import ID_PATTERN
from fuzzer.model import ExitCode

EXIT_FOUND, EXIT_NOT_FOUND = 0, 1


class _DashAware(click.Command):
    """Remembers which words came before `--`: a FINDING there, the build command after it."""

    def parse_args(self, ctx, args):
        ctx.meta["after_dash"] = len(args) - args.index("--") - 1 if "--" in args else 0
        return super().parse_args(ctx, args)


@click.command(cls=_DashAware, epilog="""\b
Examples:
  buildfuzz bisect --good v1.2 --bad HEAD 3f2a9c0d1e4b     a stored finding's own reproducer
  buildfuzz bisect --good v1.2 --bad HEAD -- make -j{jobs}  any divergence or failure

\b
Exit codes: 0 the first bad commit named, 1 not named (the finding did not show at --bad,
or skipped commits leave several), 2 bad usage, 4 interrupted (run it again to resume).""")
@click.option("--good", required=True, help="A commit without the finding.")
@click.option("--bad", required=True, help="A later commit with it (an ancestor path from --good).")
@click.option("--source", type=PATH, default=".", show_default=True,
              help="The build's directory in the checkout (with a FINDING: where it was found).")
@store_option
@click.option("--tries", type=click.IntRange(1, 10_000), help="Tries per commit (default: from the measured rate).")
@click.option("--rate", type=RATE, help="The rate the finding shows at per build, when none is measured (e.g. 25%).")
@click.option("--seed", type=int, default=1, show_default=True, help="The jitter seed of a build without a FINDING.")
@click.option("--timeout", type=float, help="Kill a build after SECONDS (a reference that times out is skipped).")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def bisect(ctx, good, bad, source, store, tries, rate, seed, timeout, words) -> None:
    """Name the first commit that shows FINDING (or any divergence: BUILD COMMAND after --)."""
    from fuzzer import bisect as bisection
    from fuzzer.bisect import reproducer as reproducers
    from fuzzer.store import Store

    named = words[:len(words) - ctx.meta["after_dash"]]
    if len(named) > 1 or (named and not ID_PATTERN.fullmatch(named[0])):
        raise UsageError(f"{shown(' '.join(named))} is not a finding id (12 hexadecimal digits); "
                         "a build command goes after --")
    finding, command = (named[0] if named else None), words[len(named):]
    opened = Store(store, create=finding is None, exclusive=True)
    try:
        if finding:
            found = reproducers.from_finding(opened, finding)
        else:
            found = reproducers.any_divergence(opened, source, " ".join(command) or None, seed)
        if rate is not None:
            found = replace(found, rate=rate.value, rate_from=f"--rate {rate.value:.1%}")
        plan = bisection.plan(found.source if finding else source, good, bad, found, tries, timeout)
        click.echo(f"bisecting {found.describe()}: {plan.why}")
        click.echo(plan.cost())
        result = bisection.run(plan, opened, lambda judged: click.echo(_step(plan, judged)))
    except KeyboardInterrupt:
        click.echo("interrupted: the commits judged so far are stored; the same command resumes", err=True)
        sys.exit(ExitCode.NO_VERDICT)
    finally:
        opened.close()
    sys.exit(_said(plan, result))


def _step(plan, judged) -> str:
    from fuzzer.tools import git

    again = " (judged before: resumed)" if judged.resumed else ""
    return f"  {git.subject(plan.repo, judged.rev)}: {judged.detail}{again}"


def _said(plan, result) -> int:
    from fuzzer.tools import git

    builds = sum(1 + step.tries for step in result.steps if not step.resumed)  # a reference and its tries
    click.echo(f"{len(result.steps)} commits judged, {builds} builds made in this run")
    skipped = [s for s in result.steps if s.verdict == "skip"]
    if skipped:
        click.echo(f"skipped {len(skipped)} commit(s) whose reference build failed: "
                   + ", ".join(s.rev[:12] for s in skipped))
    if result.first_bad:
        click.echo(f"first bad commit: {git.subject(plan.repo, result.first_bad)} ({result.first_bad})")
        return EXIT_FOUND
    if not result.suspects:
        click.echo(f"not named: the finding did not show at --bad {plan.bad[:12]} in {result.steps[0].tries} tries")
    else:
        click.echo("not named: skipped commits leave several; the first bad commit is one of: "
                   + ", ".join(git.subject(plan.repo, rev) for rev in result.suspects))
    return EXIT_NOT_FOUND
