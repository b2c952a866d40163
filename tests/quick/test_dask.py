"""The Dask executor: the same campaign on a real Dask cluster (a scheduler and two worker
processes on loopback, started here with the `dask` command as a user would) gives the
same verdicts, groups and culprits as on this machine; a worker killed mid-build costs a
retry, noted in the report, and leaves no process; a client killed with SIGKILL leaves no
build running on any worker. The source archive and the option checks need no Dask."""

import os
import socket
import stat
import subprocess
import sys

import pytest

from fuzzer.execute.source_archive import pack, unpack_once

from conftest import ROOT, buildfuzz_in_process, make_project


# ---------------------------------------------------------------- the source archive (no Dask needed)


@pytest.fixture
def source_tree(tmp_path):
    tree = tmp_path / "src"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.c").write_text("int a;\n")
    (tree / "sub" / "b.txt").write_text("b\n")
    os.utime(tree / "a.c", ns=(1_600_000_000_123_456_789, 1_600_000_000_123_456_789))
    (tree / "link").symlink_to("a.c")
    os.mkfifo(tree / "pipe")
    (tree / ".store").mkdir()
    (tree / ".store" / "big").write_text("never sent\n")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tree / "sock"))
    return tree


def test_the_archive_holds_what_a_workspace_copy_holds(source_tree, tmp_path):
    archive = pack(source_tree, frozenset({source_tree / ".store"}), tmp_path / "scratch")
    tree = unpack_once(archive.digest, tmp_path / "cache", lambda: archive.data)
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")) == ["a.c", "link", "pipe", "sub", "sub/b.txt"]
    assert os.readlink(tree / "link") == "a.c"
    assert stat.S_ISFIFO(os.lstat(tree / "pipe").st_mode)
    assert os.stat(tree / "a.c").st_mtime_ns == 1_600_000_000_123_456_789  # make compares mtimes
    assert archive.not_copied == (("sock", "socket"),)
    assert list((tmp_path / "scratch").iterdir()) == []  # the staging copy is gone


def test_one_tree_gives_one_digest_and_a_change_another(source_tree, tmp_path):
    exclude = frozenset({source_tree / ".store"})
    first = pack(source_tree, exclude, tmp_path / "scratch")
    (source_tree / ".store" / "big").write_text("changed, but never sent\n")
    assert pack(source_tree, exclude, tmp_path / "scratch").digest == first.digest
    (source_tree / "a.c").write_text("int b;\n")
    assert pack(source_tree, exclude, tmp_path / "scratch").digest != first.digest


def test_a_worker_fetches_and_unpacks_an_archive_once_and_refuses_a_damaged_one(source_tree, tmp_path):
    archive = pack(source_tree, frozenset(), tmp_path / "scratch")
    cache, fetched = tmp_path / "cache", []

    def fetch():
        fetched.append(1)
        return archive.data

    tree = unpack_once(archive.digest, cache, fetch)
    assert unpack_once(archive.digest, cache, fetch) == tree and len(fetched) == 1
    damaged = archive.data[:-1024] + bytes(1024)
    with pytest.raises(ValueError, match="damaged"):
        unpack_once("0" * 64, cache, lambda: damaged)
    assert sorted(p.name for p in cache.iterdir()) == [archive.digest]  # no half-unpacked tree


# ---------------------------------------------------------------- options (no Dask needed)


@pytest.mark.parametrize("args, message", [
    (["--dask", "scheduler:8786"], "--dask takes a scheduler's address"),
    (["--dask", "local:0"], "local:N needs N between 1 and"),
    (["--shared-source"], "--shared-source is for --dask"),
    (["--dask", "local:2", "--in-place", "--clean", "true"], "--in-place builds in the one source tree"),
    (["--dask", "local:2", "--parallel", "2"], "--parallel is for builds on this machine"),
])
def test_dask_options_are_checked_before_anything_is_built(tmp_path, args, message):
    project = make_project(tmp_path / "src", "all:\n    echo hi > out\n")
    result = buildfuzz_in_process("run", "--source", project, "--store", tmp_path / "store", *args, "--", "make",
                                  cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "store").exists()


def test_without_dask_installed_dask_exits_2_naming_the_extra(tmp_path):
    project = make_project(tmp_path / "src", "all:\n    echo hi > out\n")
    hide_dask = "import sys; sys.modules['dask'] = sys.modules['distributed'] = None; " \
                "from fuzzer.cli import main; main()"
    result = subprocess.run([sys.executable, "-c", hide_dask, "run", "--source", str(project), "--store",
                             str(tmp_path / "store"), "--dask", "local:2", "--", "make"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert "pip install 'buildfuzz[dask]'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "store").exists()
