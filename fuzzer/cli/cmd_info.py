"""`buildfuzz schema` and `buildfuzz doctor`: what buildfuzz writes, and what it needs."""

from __future__ import annotations

import json

import click

@click.command()
def schema() -> None:
    """Print the JSON Schema of the report that --report-json writes."""
    from fuzzer.report.schema import report_schema

    click.echo(json.dumps(report_schema(), indent=2))


@click.command()
def doctor() -> None:
    """List the external tools buildfuzz uses and which are missing."""
    from fuzzer.tools import all_tools

    for tool in all_tools():
        status = tool.path() or f"missing (apt-get install {tool.package})"
        click.echo(f"{tool.name:<12} {status:<40} {tool.purpose}")
