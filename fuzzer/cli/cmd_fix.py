"""`buildfuzz fix`: write and prove a patch for each culprit and hazard of a stored campaign,
or apply one proven patch to the source tree."""

from __future__ import annotations

import click

from fuzzer.cli.options import PATH, campaign_option, store_option
from fuzzer.cli.outputs import check_writable
from fuzzer.errors import UsageError


@click.command(epilog="""\b
Examples:
  buildfuzz fix                        a patch for every finding of the latest campaign, proven
  buildfuzz fix 41f7f3798f20           that finding's only
  buildfuzz fix --apply 41f7f3798f20   apply its proven patch to the source tree
  buildfuzz fix --apply 41f7f3798f20 --line   apply its divergent line's proven patch (the generator's)

\b
Exit codes: 0 every patch written is proven (or applied), 1 some finding has no proven patch,
2 bad usage (no store, no report, unknown finding, a patch that does not apply), 4 interrupted.""")
@store_option
@campaign_option
@click.argument("findings", nargs=-1)
@click.option("--report-json", type=PATH, help="Also write the report with its fixes here (patches in PATH.fixes/).")
@click.option("--before", type=click.IntRange(1, 100), default=3, show_default=True,
              help="Builds of the finding's schedule before the patch.")
@click.option("--after", type=click.IntRange(1, 1000), default=12, show_default=True,
              help="Builds of it after the patch: 0 of k bounds what is left below about 3/k.")
@click.option("--apply", "apply_id", metavar="FINDING", help="Apply this finding's proven patch to the source tree.")
@click.option("--force", is_flag=True, help="With --apply: apply a patch that is not proven.")
@click.option("--line", "line", is_flag=True,
              help="With --apply: apply the patch to the finding's divergent line (the generator's), not the build file's.")
def fix(store, campaign, findings, report_json, before, after, apply_id, force, line) -> int:
    """Write a patch for each culprit and hazard beside the report, and prove it by rebuilding."""
    from fuzzer.escaping import safe_line
    from fuzzer.campaign.rebuild import fix_campaign
    from fuzzer.fix.fixes import apply_fix
    from fuzzer.fix.suggest import described
    from fuzzer.model import FixStatus

    if apply_id is not None:
        if findings or report_json:
            raise UsageError("--apply FINDING takes no other finding and no --report-json")
        changed = apply_fix(store, campaign, apply_id, force, line)
        click.echo(safe_line(f"applied {apply_id}'s patch to {changed}"))
        return 0
    if force or line:
        raise UsageError(f"{'--force' if force else '--line'} goes with --apply FINDING")
    if report_json is not None:
        check_writable(report_json)
    fixed = fix_campaign(store, campaign, tuple(findings), report_json, before, after)
    if not fixed:
        click.echo("no culprit or hazard to fix")
    for f in fixed:
        click.echo(safe_line(f"{f.finding_id}  {f.what}"))
        click.echo(safe_line(f"    {f.status}"))
        extras = [f"patch: {f.fix.patch}"] if f.fix.patch else []
        extras += [f"upstream: {f.fix.upstream}"] if f.fix.upstream else []
        for extra in extras + f.fix.untested:
            click.echo(safe_line(f"    {extra}"))
        if f.line is not None:  # the generator's own line, beside the build file's fix
            click.echo(safe_line(f"    line: {described(f.line)}"))
            for extra in filter(None, (f.line.summary, f.line.patch and f"patch: {f.line.patch}")):
                click.echo(safe_line(f"        {extra}"))
    return 0 if all(FixStatus.PROVEN in (f.fix.status, f.line and f.line.status) for f in fixed) else 1
