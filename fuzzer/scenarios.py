"""Scenarios: small real builds with a known (non)determinism, scored against [expect].

`buildfuzz scenarios check DIR...` runs each scenario as a normal campaign in a
throwaway store and compares the report with the scenario's expectations. Nothing
here knows any scenario: it must score directories it has never seen.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig, UsageError
from fuzzer.report.model import Report

DEFAULT_RUNS = 8
KINDS = ("intrinsic", "race", "order", "parallelism-level")


@dataclass(frozen=True)
class Expect:
    verdict: str
    artifacts: tuple[str, ...] = ()
    culprit: str | None = None
    kind: str | None = None
    axis: str | None = None
    stabilized_by: str | None = None
    failures: bool | None = None


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


@dataclass(frozen=True)
class Check:
    name: str  # verdict, artifacts, culprit, ...
    status: str  # pass | FAIL | pending
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
        return not self.error and all(c.status != "FAIL" for c in self.checks)

    def to_json(self) -> dict:
        return {
            "scenario": self.scenario,
            "passed": self.passed,
            "seconds": self.seconds,
            "error": self.error,
            "checks": [vars(c) for c in self.checks],
            "report": self.report.to_json() if self.report else None,
        }


def find_scenarios(dirs: Iterable[Path]) -> list[Scenario]:
    """Each DIR is a scenario (has scenario.toml) or holds scenario subdirectories."""
    found = []
    for directory in dirs:
        if (directory / "scenario.toml").is_file():
            found.append(load_scenario(directory))
        elif directory.is_dir():
            subdirs = sorted(d for d in directory.iterdir() if (d / "scenario.toml").is_file())
            if not subdirs:
                raise UsageError(f"{directory} holds no scenario.toml (neither itself nor a subdirectory)")
            found += [load_scenario(d) for d in subdirs]
        else:
            raise UsageError(f"scenario directory {str(directory)!r} does not exist")
    return found


def load_scenario(directory: Path) -> Scenario:
    path = directory / "scenario.toml"
    try:
        data = tomllib.loads(path.read_text())
        expect = data["expect"]
        run = data.get("run", {})
        scenario = Scenario(
            name=directory.name,
            path=directory,
            description=data.get("description", ""),
            command=data["command"],
            expect=Expect(
                verdict=expect["verdict"],
                artifacts=tuple(expect.get("artifacts", ())),
                culprit=expect.get("culprit"),
                kind=expect.get("kind"),
                axis=expect.get("axis"),
                stabilized_by=expect.get("stabilized_by"),
                failures=expect.get("failures"),
            ),
            runs=run.get("runs"),
            artifacts=tuple(run.get("artifacts", ())),
            ignore=tuple(run.get("ignore", ())),
            jobs=tuple(run["jobs"]) if "jobs" in run else None,
        )
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise UsageError(f"{path}: not a valid scenario ({type(e).__name__}: {e})") from None
    if scenario.expect.verdict not in ("reproducible", "unreproducible"):
        raise UsageError(f"{path}: verdict must be reproducible or unreproducible")
    if scenario.expect.kind is not None and scenario.expect.kind not in KINDS:
        raise UsageError(f"{path}: unknown kind {scenario.expect.kind!r}")
    return scenario


def check_scenarios(
    scenarios: list[Scenario], *, runs: int | None, seed: int, progress: Callable[[str], None] = lambda _: None
) -> list[Score]:
    return [check_scenario(s, runs=runs, seed=seed, progress=progress) for s in scenarios]


def check_scenario(scenario: Scenario, *, runs: int | None, seed: int, progress: Callable[[str], None]) -> Score:
    progress(f"scenario {scenario.name}: {scenario.description}")
    store = Path(tempfile.mkdtemp(prefix=f"buildfuzz-{scenario.name}-"))
    started = time.monotonic()
    try:
        config = FuzzConfig(
            source=scenario.path,
            command=scenario.command,
            store=store,
            runs=runs or scenario.runs or DEFAULT_RUNS,
            seed=seed,
            artifacts=scenario.artifacts,
            ignore=scenario.ignore,
            **({"jobs": scenario.jobs} if scenario.jobs else {}),
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
    top = report.culprits[0] if report.culprits else None
    if expect.culprit is None and expect.verdict == "reproducible":
        checks.append(_check("no culprit", top is None, top.command if top else ""))
    for name, want, got in (
        ("culprit", expect.culprit, top.command if top else None),
        ("kind", expect.kind, top.kind if top else None),
        ("axis", expect.axis, top.axis if top else None),
        ("stabilized_by", expect.stabilized_by, top.stabilized_by if top else None),
    ):
        if want is None:
            continue
        if not report.localized:
            checks.append(Check(name, "pending", "not localized: " + "; ".join(report.notes)[:120]))
        elif name == "culprit":
            checks.append(_check(name, got is not None and want in got, str(got)))
        elif name == "stabilized_by":
            checks.append(_check(name, got is not None and want in got, ", ".join(got or []) or "none"))
        else:
            checks.append(_check(name, got == want, str(got)))
    return tuple(checks)


def _check(name: str, ok: bool, detail: str) -> Check:
    return Check(name, "pass" if ok else "FAIL", detail)


def _missing(expected: Iterable[str], found: set[str]) -> str:
    missing = sorted(set(expected) - found)
    return f"missing {', '.join(missing)}" if missing else f"{len(found)} divergent"


def render_table(scores: list[Score]) -> str:
    names = ["verdict", "artifacts", "failures", "no culprit", "culprit", "kind", "axis", "stabilized_by"]
    header = ["scenario", *names, "time", "result"]
    rows = [header]
    for s in scores:
        by_name = {c.name: c.status for c in s.checks}
        result = "PASS" if s.passed else ("ERROR: " + s.error if s.error else "FAIL")
        rows.append([s.scenario, *(by_name.get(n, "-") for n in names), f"{s.seconds:.1f}s", result])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    failures = [f"  {s.scenario}: {c.name}: {c.detail}" for s in scores for c in s.checks if c.status == "FAIL"]
    passed = sum(s.passed for s in scores)
    lines += ["", f"{passed}/{len(scores)} scenarios pass"] + (["failed checks:", *failures] if failures else [])
    return "\n".join(lines)
