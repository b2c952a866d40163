"""Outputs outside the tree: the workspace's parent (what dpkg-buildpackage writes to ..)
and --output directories are emptied before each run, hashed after it and reported."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import xxhash

from conftest import buildfuzz_in_process
from fuzzer.campaign.evidence import Evidence
from fuzzer.config import FuzzConfig, validate
from fuzzer.errors import UsageError
from fuzzer.execute.guard import Guard
from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.execute.workspace import PARENT, Workspace, output_dirs
from fuzzer.model import PackageFile, RunStatus
from fuzzer.observe import Entry, Manifest, is_package
from fuzzer.plan import Perturbation
from fuzzer.report.packages import packages_line
from fuzzer.tools import unshare
from fuzzer.trace.parse import parse_lines
from fuzzer.trace.processes import track_processes
from fuzzer.trace.outside import outside_note, written_outside
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

PLAIN = Perturbation(1, None, 0.0, 0)
needs_namespaces = pytest.mark.needs("unshare")


def digest_of(text: str) -> str:
    """A package file's digest (sha256); other files' are xxh3-128 (text_digest_of)."""
    return hashlib.sha256(text.encode()).hexdigest()


def text_digest_of(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(text.encode())


def workspace(tmp_path: Path, *outputs: Path) -> Workspace:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "input.txt").write_text("in\n")
    return Workspace(source, tmp_path / "store" / "workspace" / "src", parent_outputs=True,
                     outputs=output_dirs(outputs))


def spec_for(tmp_path: Path, command: str, *outputs: Path) -> BuildSpec:
    return BuildSpec(command, workspace(tmp_path, *outputs), tmp_path / "logs")


# ---------------------------------------------------------------- the workspace


def test_prepare_empties_the_parent_but_never_follows_a_link_or_touches_the_axes_own(tmp_path):
    ws = workspace(tmp_path)
    parent = ws.path.parent
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine\n")
    parent.mkdir(parents=True)
    (parent / "old_1.0_amd64.deb").write_text("last run's\n")
    (parent / "subdir").mkdir()
    (parent / "subdir" / "x").write_text("x\n")
    os.symlink(precious, parent / "link-out")
    (parent / "src.at-p").mkdir()  # the build-path axis's mount point
    ws.prepare()
    assert sorted(os.listdir(parent)) == ["src", "src.at-p"]
    assert (precious / "keep.txt").read_text() == "mine\n"


def test_outside_manifest_names_parent_files_as_dotdot_and_outputs_by_absolute_path(tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    ws = workspace(tmp_path, out)
    ws.prepare()
    (ws.path.parent / "pkg.deb").write_text("deb\n")
    (ws.path.parent / "src.disorderfs").mkdir()  # the dirorder axis's backing tree: not an output
    (out / "sub").mkdir()
    (out / "sub" / "x.whl").write_text("whl\n")
    found = ws.outside_manifest()
    assert sorted(found.entries) == ["../pkg.deb", f"{out}/sub/x.whl"]
    assert found.entries["../pkg.deb"].digest == digest_of("deb\n")
    assert ws.locate("../pkg.deb") == ws.path / "../pkg.deb" and ws.locate(f"{out}/sub/x.whl") == out / "sub/x.whl"
    assert ws.compared_places() == [str(ws.path.parent), str(out)]


def test_a_workspace_that_does_not_own_its_parent_leaves_it_alone(tmp_path):
    ws = replace(workspace(tmp_path), parent_outputs=False)
    ws.path.parent.mkdir(parents=True)
    (ws.path.parent / "theirs.deb").write_text("not ours\n")
    ws.prepare()
    assert (ws.path.parent / "theirs.deb").exists() and ws.outside_manifest().entries == {}


# ---------------------------------------------------------------- runs


def test_each_run_sees_an_empty_parent_and_output_and_its_files_are_compared(tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    (out / "stale.whl").write_text("before the campaign\n")
    # the build appends: a run that inherited the last one's files would show two lines
    spec = spec_for(tmp_path, f"echo $$ >> ../pkg.deb; echo $$ >> {out}/x.whl; cat ../pkg.deb > seen.txt", out)
    with LocalExecutor(spec) as executor:
        runs = [executor.run(RunRequest(i, PLAIN)) for i in range(2)]
        assert executor.fetch(runs[1], "../pkg.deb", tmp_path / "fetched")
        kept = tmp_path / "campaign" / "reference" / "src"
        assert executor.keep_tree(runs[1], kept)
    for run in runs:
        assert run.ok, run.log_tail
        entries = run.manifest.entries
        assert sorted(p for p in entries if not p.endswith(".txt")) == [PARENT + "pkg.deb", f"{out}/x.whl"]
        # one line, its own (two would be twice the size); a package's digest is sha256, a .txt's not
        assert entries["../pkg.deb"].size == entries["seen.txt"].size
    assert runs[0].manifest.entries["../pkg.deb"].digest != runs[1].manifest.entries["../pkg.deb"].digest
    spec.workspace.remove()  # as a campaign ends: the tree and what its builds left beside it
    assert os.listdir(spec.workspace.path.parent) == [] and (out / "x.whl").exists()  # --output: the user's
    assert (tmp_path / "fetched").read_text() == (kept / "seen.txt").read_text()
    assert (kept.parent / "pkg.deb").read_text() == (kept / "seen.txt").read_text()  # kept beside the tree


@needs_namespaces
def test_slots_building_at_once_never_share_a_parent_or_an_output(tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    started = tmp_path / "started"
    # both builds write, wait until both have, then read back: a shared directory shows the other's
    spec = spec_for(tmp_path, f"echo $$ > ../pkg.deb; echo $$ > {out}/x.whl; echo $$ >> {started}; "
                              f"while [ $(wc -l < {started}) -lt 2 ]; do sleep 0.05; done; "
                              f"cat ../pkg.deb {out}/x.whl > seen.txt", out)
    store_file = tmp_path / "store" / "buildfuzz.db"  # beside the slots: never a workspace's to remove
    store_file.parent.mkdir(parents=True)
    store_file.write_text("db\n")
    with LocalExecutor(spec, slots=2, isolation=unshare.isolation()) as executor:
        futures = [executor.submit(RunRequest(i, PLAIN)) for i in (1, 2)]
        runs = [f.result() for f in executor.as_completed(futures)]
    pids = set()
    for run in runs:
        assert run.ok, run.log_tail
        mine = run.manifest.entries["../pkg.deb"].digest
        pid = next(p for p in started.read_text().split() if digest_of(p + "\n") == mine)
        assert run.manifest.entries["seen.txt"].digest == text_digest_of(f"{pid}\n{pid}\n")
        assert run.manifest.entries[f"{out}/x.whl"].digest == mine
        pids.add(pid)
    assert len(pids) == 2
    assert list(out.iterdir()) == []  # outside the namespaces the slots' files were never there
    assert not spec.workspace.path.parent.with_name("workspace.slots").exists()
    assert store_file.read_text() == "db\n"


# ---------------------------------------------------------------- --output checks


@pytest.mark.parametrize("where, message", [
    ("missing", "is not a directory"),
    ("a-file", "is not a directory"),
    ("src", "is the source tree"),
    ("src/sub", "is inside the source tree"),
    (".", "contains the source tree"),
    ("elsewhere/store", "is the store"),
])
def test_a_bad_output_is_refused_before_anything_is_built(tmp_path, where, message):
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "a-file").write_text("")
    (tmp_path / "elsewhere" / "store").mkdir(parents=True)
    config = FuzzConfig(source=tmp_path / "src", command="make", store=tmp_path / "elsewhere" / "store",
                        output_dirs=(tmp_path / where,))
    with pytest.raises(UsageError, match=message):
        validate(config)


def test_two_outputs_may_not_nest(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "out" / "inner").mkdir(parents=True)
    config = FuzzConfig(source=tmp_path / "src", command="make", store=tmp_path / "src" / ".buildfuzz",
                        output_dirs=(tmp_path / "out", tmp_path / "out" / "inner"))
    with pytest.raises(UsageError, match="contains another --output"):
        validate(replace(config, output_dirs=tuple(reversed(config.output_dirs))))


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return buildfuzz_in_process("run", "--store", tmp_path / "store", *args, cwd=tmp_path, timeout=120)


def test_the_cli_says_one_line_and_exits_2_for_an_output_that_is_no_directory(tmp_path):
    (tmp_path / "src").mkdir()
    proc = run_cli(tmp_path, "--source", "src", "--output", "nowhere", "--", "true")
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "--output 'nowhere' is not a directory" in proc.stderr
    assert not (tmp_path / "store").exists()


def test_the_settings_file_takes_outputs_relative_to_itself(tmp_path):
    source, out = tmp_path / "proj" / "src", tmp_path / "proj" / "dist"
    source.mkdir(parents=True)
    out.mkdir()
    (source / "buildfuzz.toml").write_text('output = ["../dist"]\nruns = 2\n')
    proc = run_cli(tmp_path, "--source", str(source), "--no-localize", "--axes", "jobs", "--report-json",
                   str(tmp_path / "r.json"), "--", f"echo same > {out}/pkg.whl && echo same > ../app.deb")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["settings"]["output"] == {"value": [str(source / "../dist")], "source": "file",
                                            "origin": f"{source / 'buildfuzz.toml'}"}
    assert [(p["path"], p["variants"], p["runs"]) for p in report["packages"]] == [
        ("../app.deb", 1, 2), (f"{out}/pkg.whl", 1, 2)]
    assert "packages compared: ../app.deb (5 bytes" in proc.stdout


# ---------------------------------------------------------------- report parts


def test_package_files_are_known_by_name():
    assert all(map(is_package, ["../hello_2.10-3_amd64.deb", "dist/x-1.0-cp311-linux_x86_64.whl", "x.tar.zst",
                                "../hello_2.10-3_amd64.buildinfo", "../h.changes", "a/b.jar", "p.crate", "x.tgz"]))
    assert not any(map(is_package, ["libfoo.so", "deb", "tar.txt", "debian/rules", "x.debx"]))


def test_the_packages_line_names_each_with_its_verdict():
    line = packages_line([PackageFile("../a.deb", 2048, "ab" * 32, 1, 4),
                          PackageFile("../a.buildinfo", 9, "cd" * 32, 3, 4)])
    assert line == ("packages compared: ../a.deb (2,048 bytes, sha256 abababababab, identical in 4 runs), "
                    "../a.buildinfo (9 bytes, sha256 cdcdcdcdcdcd, 3 variants in 4 runs)")


def test_files_left_outside_every_compared_place_are_named_once_with_the_option():
    trace = synthetic_trace([
        FakeStep("cc -c a.c", 1.0, 2.0, writes={"a.o": 1.5, "/tmp/cc1.s": 1.1}, deletes={"/tmp/cc1.s": 1.4}),
        FakeStep("setup.py bdist_wheel", 2.0, 3.0, writes={"/tmp/pip-wheel-x/m.whl": 2.5, "/out/ok.whl": 2.6}),
        FakeStep("cp", 3.0, 4.0, writes={"/ws-parent/pkg.deb": 3.5}),
    ])
    compared = ["/ws-parent", "/out"]
    assert written_outside(trace, compared) == ["/tmp/pip-wheel-x/m.whl"]
    (note,) = outside_note(trace, compared)
    assert "1 file(s) outside the compared places" in note and "/tmp/pip-wheel-x/m.whl" in note
    assert "--output DIR" in note
    assert outside_note(synthetic_trace([FakeStep("true", 1.0, 2.0)]), compared) == ()


def test_the_trace_names_the_owned_parent_s_files_as_manifests_do():
    text = textwrap.dedent("""
        5 1.0 openat(AT_FDCWD</store/workspace/src>, "../pkg.deb", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</store/workspace/pkg.deb>
        5 1.1 openat(AT_FDCWD</store/workspace/src>, "/store/workspace.slots/x", O_RDONLY) = 3</store/workspace.slots/x>
        5 1.2 exit_group(0) = ?
    """).strip().splitlines(keepends=True)
    (process,) = track_processes(parse_lines(text), "/store/workspace/src", parent=True)
    owned = {(a.kind, a.path) for a in process.accesses}
    assert owned == {("write", "../pkg.deb"), ("read", "/store/workspace.slots/x")}
    theirs = {a.path for a in track_processes(parse_lines(text), "/store/workspace/src")[0].accesses}
    assert theirs == {"/store/workspace/pkg.deb", "/store/workspace.slots/x"}  # --in-place: the parent is not ours


def test_a_step_replay_whose_program_is_gone_is_a_failed_replay_not_a_crash(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tmp_path / "pkg.deb").write_text("traced\n")
    call = StepCall(argv=(str(tmp_path / "build-env" / "bin" / "python"), "-c", "pass"), cwd=".", env={},
                    exit_code=0, restored=("../pkg.deb",), compared=("../pkg.deb",))
    with Guard() as guard, StepReplayer(guard, tree, call, (0,), tmp_path / "logs") as replayer:
        outcome = replayer.replay(times=2)
        backups = [p.name for p in (tmp_path / "logs").iterdir() if p.is_dir()]
        assert [b.startswith("step-outputs-") for b in backups] == [True]
        assert not (tmp_path / "logs" / "pkg.deb").exists()  # ../pkg.deb is backed up inside it, not beside
    assert outcome.failed and outcome.exit_codes == (127, 127) and "cannot run" in outcome.failure
    assert (tmp_path / "pkg.deb").read_text() == "traced\n"


def test_outputs_are_for_builds_on_this_machine(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    config = FuzzConfig(source=tmp_path / "src", command="make", store=tmp_path / "src" / ".buildfuzz",
                        output_dirs=(tmp_path / "out",), dask="local:1")
    with pytest.raises(UsageError, match="--output is for builds on this machine"):
        validate(config)


def test_the_kept_reference_serves_parent_files_and_outputs_come_from_blobs(tmp_path):
    evidence = Evidence(tmp_path / "campaign-1", "src")
    evidence.reference_tree.mkdir(parents=True)
    (evidence.reference_tree.parent / "pkg.deb").write_text("deb\n")
    live = tmp_path / "dist" / "x.whl"  # a later run's: the --output directory is reused
    live.parent.mkdir()
    live.write_text("a later run's wheel\n")
    entries = {"../pkg.deb": Entry("file", digest_of("deb\n")), str(live): Entry("file", digest_of("whl\n"))}
    run0 = RunRecord(0, PLAIN, RunStatus.OK, 0, 1.0, Manifest(entries), "")
    assert evidence.variant_file(run0, "../pkg.deb") == evidence.reference_tree.parent / "pkg.deb"
    assert evidence.variant_file(run0, str(live)) is None  # never the live file, which is no longer run 0's
    evidence.blob(digest_of("whl\n")).parent.mkdir(parents=True)
    evidence.blob(digest_of("whl\n")).write_text("whl\n")
    assert evidence.variant_file(run0, str(live)) == evidence.blob(digest_of("whl\n"))
