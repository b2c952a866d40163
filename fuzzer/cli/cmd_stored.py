"""The commands on a stored campaign: `replay` one of its runs, `explain` its report again,
`accept` its findings, write them as a `baseline`."""

from __future__ import annotations

import json
import sys

import click

from fuzzer import axes as axis_table
from fuzzer.cli.options import CPU_LIST, EXIT_CODES_HELP, ID, PATH, campaign_option, store_option
from fuzzer.cli.outputs import check_outputs, check_writable, finish
from fuzzer.config import MAX_INT, Outputs, check_range, max_jobs
from fuzzer.errors import UsageError
from fuzzer.model import ExitCode, available_cpus
from fuzzer.plan import Perturbation

@click.command(epilog="""\b
Examples:
  buildfuzz replay --run 7                       the perturbation of run 7 again
  buildfuzz replay --jobs 8 --cpus 0 --jitter 0.5 --jitter-seed 3

\b
Exit codes: 1 the divergence or failure reproduced, 0 the build matched the reference,
2 bad usage, 4 interrupted.""")
@store_option
@campaign_option
@click.option("--run", "index", type=ID, help="Run index to replay.")
@click.option("--jobs", type=int, help="Instead of --run: replay this job count ...")
@click.option("--cpus", type=CPU_LIST, help="... on this CPU list (e.g. 0-1,3) ...")
@click.option("--jitter", type=float, default=0.0, help="... with this jitter intensity ...")
@click.option("--jitter-seed", type=int, default=0, help="... and jitter seed ...")
@click.option("--vary", "variations", multiple=True, metavar="NAME=VALUE",
              help="... and this order or environment axis value (repeatable); compared with the reference.")
@click.option("--trace", is_flag=True, help="Also trace the replay with strace.")
def replay(store, campaign, index, jobs, cpus, jitter, jitter_seed, variations, trace) -> None:
    """Re-run one recorded run's exact perturbation (or a given one) and compare digests."""
    from fuzzer.campaign.rebuild import replay_run

    if (index is None) == (jobs is None):
        raise UsageError("replay needs either --run N or --jobs N [--cpus LIST --jitter X --jitter-seed S]")
    perturbation = _given_perturbation(jobs, cpus, jitter, jitter_seed, variations)
    result = replay_run(store, campaign, index, perturbation, trace=trace)
    click.echo(result.summary)
    sys.exit(ExitCode.UNREPRODUCIBLE if result.reproduced else ExitCode.REPRODUCIBLE)


@click.command(epilog="""\b
Examples:
  buildfuzz explain --html report.html           the latest campaign's report as a page
  buildfuzz explain --campaign 3 --relocalize    compare and trace campaign 3 again

""" + EXIT_CODES_HELP)
@store_option
@campaign_option
@click.option("--report-json", type=PATH)
@click.option("--junit", type=PATH)
@click.option("--markdown", type=PATH)
@click.option("--html", type=PATH)
@click.option("--relocalize", is_flag=True,
              help="Compare the stored runs again and localize with traced builds, instead of showing the stored report.")
@click.option("--verbose", "-v", is_flag=True, help="Unfold the summary: every variant, step, failed run's log "
              "tail, finding and the whole evidence.")
def explain(store, campaign, report_json, junit, markdown, html, relocalize, verbose) -> None:
    """Show a stored campaign's report again, in any format, without building."""
    from fuzzer.campaign.stored import explain_campaign

    outputs = Outputs(report_json, junit, markdown, html)
    check_outputs(outputs)
    finish(explain_campaign(store, campaign, relocalize), outputs, verbose)


@click.command(epilog="""\b
Examples:
  buildfuzz accept                 the latest campaign's findings no longer fail a run
  buildfuzz accept --campaign 3

\b
Exit codes: 0 accepted, 2 bad usage (no store, no such campaign, no report).""")
@store_option
@campaign_option
def accept(store, campaign) -> None:
    """Mark a stored campaign's findings as known: later runs on this store exit 1 only
    on new findings (exit 0 when the builds differ only in accepted ones)."""
    from fuzzer.campaign import stored
    from fuzzer.escaping import safe_line

    accepted = stored.accept(store, campaign)
    click.echo(f"accepted {len(accepted)} finding(s); later runs on this store fail only on new ones")
    for finding in accepted:
        click.echo(safe_line(f"  {finding.id}  {finding.kind:<8}  {finding.what}"))


@click.command(epilog="""\b
Example:
  buildfuzz baseline -o buildfuzz-baseline.json      commit it, then in CI:
  buildfuzz run --baseline buildfuzz-baseline.json -- make -j{jobs}

\b
Exit codes: 0 written, 2 bad usage (no store, no such campaign, no report, unwritable file).""")
@store_option
@campaign_option
@click.option("--output", "-o", type=PATH, required=True, help="Write the baseline file here.")
def baseline(store, campaign, output) -> None:
    """Write a stored campaign's findings to a baseline file for `buildfuzz run --baseline`."""
    from fuzzer.campaign import stored
    from fuzzer.escaping import safe_name

    check_writable(output)
    data = stored.stored_baseline(store, campaign)
    output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    click.echo(f"{len(data['findings'])} finding(s) written to {safe_name(str(output))}")


def _given_perturbation(jobs: int | None, cpus: tuple[int, ...] | None, jitter: float, jitter_seed: int,
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
    cpus = cpus if cpus is not None else available_cpus()
    perturbation = Perturbation(jobs, cpus, jitter, jitter_seed if jitter else 0)
    for text in variations:
        try:
            perturbation = perturbation.with_variation(*axis_table.parse_variation(text))
        except ValueError as e:
            raise UsageError(str(e)) from None
    return perturbation
