"""Scenarios: small real builds with a known (non)determinism, scored against [expect].

`buildfuzz scenarios check DIR...` runs each scenario as a normal campaign in a
throwaway store and compares the report with the scenario's expectations. Nothing
here knows any scenario: it must score directories it has never seen.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, Iterable

import msgspec

from fuzzer import axes as axis_table
from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig, parse_check_steps, shown
from fuzzer.errors import UsageError
from fuzzer.model import LineStatus, Report, SourceLine, Verdict
from fuzzer.report import json_format
from fuzzer.scenario_culprits import every_culprit
from fuzzer.scenario_file import Expect, ScenarioFile
from fuzzer.scenario_inside import inside_checks
from fuzzer.structs import read_table

DEFAULT_RUNS = 8


@dataclass(frozen=True)
class Scenario:
    name: str
    path: Path
    description: str
    command: str
    expect: Expect
    runs: int | None = None
    artifacts: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    jobs: tuple[int, int] | None = None
    count_bookkeeping: bool = False  # build systems' bookkeeping decides the verdict too (a CMake configure's logs)
    default_ignore: bool = True  # the older name: false is count_bookkeeping = true
    vary: tuple[str, ...] = ()  # environment axes added to the default ones, as with --vary
    localize_budget: int | None = None  # seconds
    check_steps: str | None = None  # the step audit's share, as --check-steps takes it ("all", "10%")

    @property
    def counts_bookkeeping(self) -> bool:
        """`count_bookkeeping = true`, or its older spelling `default_ignore = false`."""
        return self.count_bookkeeping or not self.default_ignore


class CheckStatus(StrEnum):
    """How one expectation fared, as the table prints it (an absent check is shown "-")."""

    PASS = "pass"
    FAIL = "FAIL"
    PENDING = "pending"  # not judged: localization did not get that far


@dataclass(frozen=True)
class Check:
    name: str  # verdict, artifacts, culprit, ...
    status: CheckStatus
    detail: str = ""


@dataclass(frozen=True)
class Score:
    scenario: str
    checks: tuple[Check, ...]
    seconds: float
    report: Report | None = None
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and all(c.status != CheckStatus.FAIL for c in self.checks)

    def to_json(self) -> dict:
        return {
            "scenario": self.scenario,
            "passed": self.passed,
            "seconds": self.seconds,
            "error": self.error,
            "checks": [vars(c) for c in self.checks],
            "report": json_format.to_builtins(self.report) if self.report else None,
        }


def find_scenarios(dirs: Iterable[Path]) -> list[Scenario]:
    """Each DIR is a scenario (has scenario.toml) or holds scenario subdirectories."""
    found = []
    for directory in dirs:
        # os.path's tests answer False for any OSError (a name too long, a loop), not raise
        if os.path.isfile(directory / "scenario.toml"):
            found.append(load_scenario(directory))
        elif os.path.isdir(directory):
            subdirs = sorted(d for d in directory.iterdir() if os.path.isfile(d / "scenario.toml"))
            if not subdirs:
                raise UsageError(f"{shown(directory)} holds no scenario.toml (neither itself nor a subdirectory)")
            found += [load_scenario(d) for d in subdirs]
        else:
            raise UsageError(f"scenario directory {shown(directory)} does not exist")
    return found


def load_scenario(directory: Path) -> Scenario:
    """Read and check `scenario.toml`: a wrong type, an unknown key or a missing one is
    the author's error, named with its file and key, never a guess."""
    path = directory / "scenario.toml"
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as e:
        raise UsageError(f"{shown(path)}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{shown(path)}: not UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start})") from None
    except (tomllib.TOMLDecodeError, ValueError) as e:  # ValueError: an integer too long to read
        raise UsageError(f"{shown(path)}: not valid TOML: {e}") from None
    scenario = read_table(data, ScenarioFile, shown(path))
    lo, hi = scenario.run.jobs or (1, 1)
    if lo > hi:
        raise UsageError(f"{shown(path)}: run.jobs must be [LO, HI] with LO <= HI, got [{lo}, {hi}]")
    return Scenario(directory.name, directory, scenario.description, scenario.command, scenario.expect,
                    **msgspec.structs.asdict(scenario.run))


def check_scenarios(
    scenarios: list[Scenario], *, runs: int | None, seed: int, progress: Callable[[str], None] = lambda _: None
) -> list[Score]:
    return [check_scenario(s, runs=runs, seed=seed, progress=progress) for s in scenarios]


def check_scenario(scenario: Scenario, *, runs: int | None, seed: int, progress: Callable[[str], None]) -> Score:
    progress(f"scenario {scenario.name}: {scenario.description}")
    off = axis_table.unavailable(scenario.vary)
    if off:  # a campaign would run without the axis and score another question
        return Score(scenario.name, (), 0.0, error=off[0])
    store = Path(tempfile.mkdtemp(prefix=f"buildfuzz-{scenario.name}-"))
    started = time.monotonic()
    chosen: dict[str, Any] = {}  # what the scenario sets; the rest stays FuzzConfig's default
    if scenario.jobs:
        chosen["jobs"] = scenario.jobs
    if scenario.vary:
        chosen["axes"] = axis_table.DEFAULT + scenario.vary
    try:
        config = FuzzConfig(
            source=scenario.path,
            command=scenario.command,
            store=store,
            runs=runs or scenario.runs or DEFAULT_RUNS,
            seed=seed,
            artifacts=scenario.artifacts,
            ignore=scenario.ignore,
            count_bookkeeping=scenario.counts_bookkeeping,
            **chosen,
            localize_budget_s=scenario.localize_budget,
            check_steps=parse_check_steps(scenario.check_steps) if scenario.check_steps else None,
        )
        outcome = run_campaign(config)
    except UsageError as e:
        return Score(scenario.name, (), time.monotonic() - started, error=str(e))
    finally:
        shutil.rmtree(store, ignore_errors=True)
    seconds = round(time.monotonic() - started, 2)
    if outcome.exit_code == 3:
        return Score(scenario.name, (), seconds, outcome.report, error="reference build failed")
    return Score(scenario.name, score(scenario.expect, outcome.report), seconds, outcome.report)


def score(expect: Expect, report: Report) -> tuple[Check, ...]:
    divergent = {a.path for a in report.divergent_artifacts}
    checks = [
        _check("verdict", report.verdict == expect.verdict, report.verdict),
        _check("artifacts", set(expect.artifacts) <= divergent, _missing(expect.artifacts, divergent)),
    ]
    if expect.failures is not None:
        checks.append(_check("failures", (report.failed_runs > 0) == expect.failures, f"{report.failed_runs} failed"))
    checks += [_check(*found) for found in inside_checks(expect.members, expect.metadata_only,
                                                          expect.metadata_stabilized_by, report)]
    top = report.culprits[0] if report.culprits else None
    if expect.culprit is None and expect.verdict == Verdict.REPRODUCIBLE:
        checks.append(_check("no culprit", top is None, top.command if top else ""))
    for name in LOCALIZED_EXPECTATIONS:
        want = getattr(expect, name)
        if want is None:
            continue
        if not report.localized:
            checks.append(Check(name, CheckStatus.PENDING, "not localized: " + "; ".join(report.notes)[:120]))
        else:
            got = _found(name, report)
            checks.append(_check(name, got is not None and _meets(name, want, got), _detail(name, want, got)))
    if expect.culprits:
        problems = every_culprit(expect.culprits, report.culprits, _meets) if report.localized else None
        checks.append(Check("culprits", CheckStatus.PENDING) if problems is None else
                      _check("culprits", not problems, "; ".join(problems) or f"{len(expect.culprits)} named"))
    return tuple(checks)


LOCALIZED_EXPECTATIONS = ("culprit", "writer", "other_step", "kind", "axis", "stabilized_by", "hazards",
                          "missing_edge", "culprit_steps", "line", "line_cause")  # need a traced build


def _found(name: str, report: Report) -> object:
    """What the report says for expectation `name`: the top culprit's field, or the hazards."""
    if name == "hazards":
        return report.hazards
    if name == "missing_edge":  # only an edge whose rule's line is named counts
        return [f"{h.missing_edge} ({h.rule})" for h in report.hazards if h.missing_edge and h.rule]
    top = report.culprits[0] if report.culprits else None
    if name == "culprit_steps":
        return (top.steps or [top.command]) if top else None
    if name == "writer":
        return top.writer_process.command if top and top.writer_process else None
    if name in ("line", "line_cause"):
        return _line(top.line, name) if top and top.line else None
    return getattr(top, "command" if name == "culprit" else name) if top else None


# Any: what an expectation wants and what the report holds differ by its name (_found says what)
def _meets(name: str, want: Any, got: Any) -> bool:
    if name in ("culprit", "writer", "other_step", "line"):
        return want in got  # a substring of the command line, or of the line
    if name == "stabilized_by":  # a string: one of them; a list: exactly this joint set
        return want in got if isinstance(want, str) else set(want) == set(got)
    if name == "hazards":
        return len(got) <= want  # at most
    if name == "missing_edge":
        return any(want in edge for edge in got)
    if name == "culprit_steps":
        return len(got) >= want  # at least
    return got == want


def _line(line: SourceLine, name: str) -> str:
    """The line found as `gen.py:46 in Function.finalize`, or its cause; else why none was."""
    if line.status != LineStatus.FOUND:
        return f"{line.status}: {line.note}"
    return f"{Path(line.file).name}:{line.line} in {line.function}" if name == "line" else line.cause


def _detail(name: str, want: Any, got: Any) -> str:
    if name == "hazards":  # which ones, so a failing check can be read without rerunning it
        return f"{len(got)} hazards, at most {want}" + "".join(f"; {h.type} on {h.file} [{h.status}]" for h in got)
    if name == "culprit_steps":
        return f"{len(got)} steps, at least {want}"
    return ", ".join(got) or "none" if isinstance(got, list) else str(got)


def _check(name: str, ok: bool, detail: str) -> Check:
    return Check(name, CheckStatus.PASS if ok else CheckStatus.FAIL, detail)


def _missing(expected: Iterable[str], found: set[str]) -> str:
    missing = sorted(set(expected) - found)
    return f"missing {', '.join(missing)}" if missing else f"{len(found)} divergent"


def render_table(scores: list[Score]) -> str:
    names = ["verdict", "artifacts", "failures", "members", "metadata_only", "metadata_stabilized_by", "no culprit",
             *LOCALIZED_EXPECTATIONS, "culprits"]
    header = ["scenario", *names, "time", "result"]
    rows = [header]
    for s in scores:
        by_name = {c.name: c.status for c in s.checks}
        result = "PASS" if s.passed else ("ERROR: " + s.error if s.error else "FAIL")
        rows.append([s.scenario, *(by_name.get(n, "-") for n in names), f"{s.seconds:.1f}s", result])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    failures = [f"  {s.scenario}: {c.name}: {c.detail}" for s in scores for c in s.checks if c.status == CheckStatus.FAIL]
    passed = sum(s.passed for s in scores)
    lines += ["", f"{passed}/{len(scores)} scenarios pass"] + (["failed checks:", *failures] if failures else [])
    return "\n".join(lines)
