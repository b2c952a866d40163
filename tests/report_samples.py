"""Hand-built `Report`s shared by the report-format tests.

They are built by hand, not by running builds, so the format tests stay fast and pin
exactly the cases a renderer must survive: nothing found, two divergent artifacts, a
failed perturbed run, culprits with evidence, hazards, and hostile build strings.
"""

from __future__ import annotations

from msgspec import Struct, structs

from fuzzer.axes import AXES
from fuzzer.model import (ArtifactFinding, AxisScope, Culprit, Hazard, HazardStatus, Kind, NotTried, Report, RunSummary,
                          VariantSummary)

# A file name that is also an HTML injection: it must always show as text.
HOSTILE_NAME = "<img src=x onerror=alert(1)>.txt"
# Table breakers, code-span breakers, a CDATA terminator, XML-invalid control characters
# (NUL, ESC, BEL) and a lone surrogate (what os.fsdecode makes of a non-UTF-8 file name).
HOSTILE_TEXT = "a|b `x` ``` ]]> </pre><script>alert(2)</script> & \x00\x1b[31m\x07 \udcff *_[l](u)"

CPUS = [0, 1, 2, 3]
FAILED_LOG = "gcc -c ops.c\nops.c:1:10: fatal error: config.h: No such file or directory\nmake: *** [ops.o] Error 1"


def _run(index: int, jobs: int, cpus: list[int], jitter: float, group: str | None, **extra) -> RunSummary:
    defaults = dict(status="ok", exit_code=0, wall_s=1.25 + index / 10, digest=f"{group or 'x'}{index:02d}")
    defaults.update(extra)
    return RunSummary(
        index=index,
        perturbation={"jobs": jobs, "cpus": cpus, "jitter": jitter, "seed": 100 + index if jitter else 0},
        group=group,
        **defaults,
    )


def reproducible() -> Report:
    runs = [
        _run(0, 1, CPUS, 0.0, "A"),
        _run(1, 16, CPUS, 0.8, "A"),
        _run(2, 16, [2], 0.0, "A"),
        _run(3, 4, [0, 1], 0.4, "A"),
    ]
    return Report(
        command="make -j{jobs}",
        verdict="reproducible",
        runs=runs,
        failed_runs=0,
        divergent_artifacts=[],
        source="/src/hello",
        seed=7,
        campaign=1,
        artifacts_checked=12,
        exit_reason="all runs done",
        phases={"execute": 5.1, "compare": 0.2},
    )


def unreproducible() -> Report:
    """Two divergent artifacts (one hostile), a failed run, two culprits, hazards."""
    runs = [
        _run(0, 1, CPUS, 0.0, "A"),
        _run(1, 16, CPUS, 0.8, "B"),
        _run(2, 16, [2], 0.0, "C"),
        _run(3, 16, CPUS, 0.0, "A"),
        _run(4, 1, [1], 0.8, "D"),
        _run(5, 8, CPUS, 0.4, None, status="failed", exit_code=2, digest=None, log_tail=FAILED_LOG),
        _run(6, 4, [0, 1], 0.6, "E"),
    ]
    libops = ArtifactFinding(
        path="libops.a",
        variants=3,
        groups=[
            VariantSummary("A", "sha256:aaaa1111", [0, 1, 3]),
            VariantSummary("B", "sha256:bbbb2222", [2, 4]),
            VariantSummary("C", "sha256:cccc3333", [6]),
        ],
        separated_by=["cpus in {4} → A; cpus in {1} → B; cpus in {2} → C"],
        axes=["cpus"],
        same_conditions=False,
        diff="--- run 0/libops.a\n+++ run 1/libops.a\n@@ -1,2 +1,2 @@\n-ops_a.o\n-ops_b.o\n+ops_b.o\n+ops_a.o",
        diff_runs=[0, 1],
    )
    hostile = ArtifactFinding(
        path=HOSTILE_NAME,
        variants=2,
        groups=[VariantSummary("A", "sha256:dddd4444", [0, 2, 3]), VariantSummary("B", "sha256:eeee5555", [1, 4, 6])],
        separated_by=["jitter in {False} → A; jitter in {True} → B"],
        axes=["jitter"],
        same_conditions=False,
        diff=f"--- run 0/{HOSTILE_NAME}\n+++ run 1/{HOSTILE_NAME}\n-{HOSTILE_TEXT}\n+ok",
        diff_runs=[0, 1],
    )
    culprits = [
        Culprit(
            command="python3 gen.py ops.c",
            argv=["python3", "gen.py", "ops.c"],
            cwd="src",
            outputs=["src/ops.c"],
            kind="intrinsic",
            stabilized_by=["PYTHONHASHSEED", "ASLR"],
            evidence="replayed alone 5 times: 5 distinct outputs\nstable with PYTHONHASHSEED=0 + ASLR off",
            chain=["libops.a", "ops.o", "src/ops.c"],
            writer=["python3", "gen.py", "ops.c"],
        ),
        Culprit(
            command="cat *.o > libops.list",
            argv=["sh", "-c", "cat *.o > libops.list"],
            cwd=".",
            outputs=["libops.list"],
            kind="race",
            evidence="read config.h (absent) while 'cp config.h.in config.h' was writing it",
            chain=["libops.a", "libops.list"],
            other_step="cp config.h.in config.h",
        ),
    ]
    hazards = [
        Hazard("read-before-write", "config.h", "gcc -c ops.c", "cp config.h.in config.h"),
        Hazard("write-write", "out|put.log", "echo a >> out|put.log", "echo b >> out|put.log"),
    ]
    return Report(
        command="make -j{jobs} CFLAGS='-O2'",
        verdict="unreproducible",
        runs=runs,
        failed_runs=1,
        divergent_artifacts=[libops, hostile],
        culprits=culprits,
        hazards=hazards,
        reproduce="buildfuzz replay --store .buildfuzz/store.db --campaign 3 --run 1",
        source="/src/ops",
        seed=42,
        campaign=3,
        artifacts_checked=10,
        notes=["trace of run 4 was truncated"],
        exit_reason="all runs done",
        phases={"execute": 61.0, "compare": 0.4, "explain": 12.5},
        localized=True,
        minimal_reproducer="cd src && PYTHONHASHSEED=random python3 gen.py ops.c",
    )


MKDIR = "mkdir -p build/object"
COMPILES = [f"cc -c src/{name}.c -o build/object/{name}.o" for name in ("hash", "main", "util")]
EDGE, RULE = "build/object/hash.o: | build/object", "Makefile:7"


def with_shared_cause():
    """The sample report with a mkdir hazard that lacks an edge, and its one culprit for three compiles."""
    report = unreproducible()
    hazard = Hazard("mkdir-race", "build/object/", COMPILES[0], MKDIR, steps=sorted([MKDIR, *COMPILES]),
                    status=HazardStatus.MANIFEST, missing_edge=EDGE, rule=RULE)
    culprit = Culprit(COMPILES[0], ["cc"], ".", [f"build/object/{n}.o" for n in ("hash", "main")], Kind.RACE,
                      other_step=MKDIR, steps=COMPILES, evidence="3 steps share this cause")
    return structs.replace(report, hazards=[hazard, *report.hazards], culprits=[culprit, *report.culprits])


TIMEZONES = ["Etc/GMT+12", "America/St_Johns", "Asia/Kathmandu", "Etc/GMT-14", "UTC"]


def many_axes() -> Report:
    """`unreproducible()` with ten runs that varied the order and environment axes too, with
    values as long as the axes draw (time zones, shuffle seeds, hash seeds): a wide chart."""
    report = unreproducible()
    runs = [_run(0, 1, CPUS, 0.0, "A")]
    for index in range(1, 10):
        variations = {"tz": TIMEZONES[index % 5], "hashseed": str(4_000_000 + index),
                      "umask": ["0002", "0022", "0077"][index % 3]}
        if index % 3:
            variations["shuffle"] = str(1_000_000_007 * index % 2_147_483_647)
        run = _run(index, [2, 4, 16, 64][index % 4], CPUS[:1 + index % 4], 0.8 * (index % 2), "AB"[index % 2])
        runs.append(structs.replace(run, perturbation={**run.perturbation, "variations": variations}))
    groups = [VariantSummary(label, f"sha256:{label * 8}", [r.index for r in runs if r.group == label])
              for label in "AB"]
    artifact = structs.replace(report.divergent_artifacts[0], variants=2, groups=groups, separated_by=[], axes=[])
    varied = {"jobs": 4, "cpus": 3, "jitter": 2, "shuffle": 6, "tz": 5, "hashseed": 9, "umask": 3}
    scope = [AxisScope(a.name, a.label, 9 if a.name in varied else 0, varied.get(a.name, 1),
                       NotTried.TRIED if a.name in varied else NotTried.NOT_ASKED) for a in AXES]
    return structs.replace(report, runs=runs, failed_runs=0, divergent_artifacts=[artifact], scope=scope)


def hostile_everywhere(report: Report) -> Report:
    """`report` with every build string replaced by a hostile one (numbers kept)."""
    return _poison(report)


def _poison(value, key: str = ""):
    if isinstance(value, str):
        return f"{HOSTILE_NAME}{HOSTILE_TEXT}"
    if isinstance(value, list):
        return [_poison(item, key) for item in value]
    if isinstance(value, dict):
        # a perturbation's values are numbers the renderers compute with, not build strings
        if key == "perturbation":
            return value
        return {_poison(k): _poison(v) for k, v in value.items()}
    if isinstance(value, Struct):
        changes = {f.name: _poison(getattr(value, f.name), f.name) for f in structs.fields(value)}
        return structs.replace(value, **changes)
    return value
