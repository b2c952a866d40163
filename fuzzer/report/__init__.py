"""report: one `Report`, rendered by one small module per format."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fuzzer.config import STDOUT, Outputs
from fuzzer.model import Report


def write_outputs(report: Report, outputs: Outputs) -> None:
    """Write every requested format; Markdown also goes to $GITHUB_STEP_SUMMARY."""
    from fuzzer.report import html, json_format, junit, markdown

    targets = [
        (outputs.report_json, json_format.render),
        (outputs.junit, junit.render),
        (outputs.markdown, markdown.render),
        (outputs.html, html.render),
    ]
    for path, render in targets:
        if path == STDOUT:
            sys.stdout.write(render(report))
            sys.stdout.flush()
        elif path is not None:
            _write_atomically(path, render(report))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(markdown.render(report))


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
