"""strace: trace a whole build (processes and file accesses) for step localization.

`wrap()` builds the argv; `fuzzer.trace` reads the file it writes. Every traced syscall
costs two ptrace stops, so the cost is the number of traced calls: `--seccomp-bpf` stops
the tracee only on the listed syscalls, and the list leaves out the expensive and
unneeded (readlink: compilers call it ~1800 times per file to canonicalize paths).
"""

from __future__ import annotations

import functools
import os
import subprocess

from fuzzer.tools import register

STRACE = register("strace", "strace", "step localization (tracing the build)", probe=lambda: _traces())

# A `?` prefix tells strace to skip names this architecture lacks (aarch64 has no
# open/stat/mkdir...), so one list serves every machine.
# fmt: off
TRACED_SYSCALLS = (
    # process creation, program loading, exit
    "?fork", "?vfork", "clone", "?clone3", "execve", "execveat", "exit_group",
    # reads, writes and failed opens (ENOENT probes)
    "?open", "openat", "?openat2", "?creat", "?truncate",
    # existence probes
    "?stat", "?lstat", "?newfstatat", "?fstatat64", "?stat64", "?lstat64", "statx",
    "?access", "faccessat", "?faccessat2",
    # namespace changes
    "?rename", "?renameat", "renameat2", "?link", "linkat", "?symlink", "symlinkat",
    "?unlink", "unlinkat", "?rmdir", "?mkdir", "mkdirat",
    # working directory and directory listings
    "chdir", "fchdir", "getdents64",
    # copies (`cp`, shutil): the copy's bytes are the source's, so its writer is theirs
    "copy_file_range", "sendfile", "?sendfile64",
    # what a process alone cannot be given back on replay: a piped stdin, a stdout its fork
    # set before exec (`tar czf` dups its pipe and the .tar.gz for gzip), the network.
    # Shells dup2 a few times per command; none of these is called per file read (fcntl is
    # 2-3% of the traced calls of a make + gcc build or a Python subprocess).
    "dup", "?dup2", "dup3", "fcntl", "?fcntl64", "connect",
)
# fmt: on

PROBE_TIMEOUT_S = 10
# The longest string strace prints whole: the kernel's cap on one argv or envp string
# (MAX_ARG_STRLEN, 32 pages). A shorter cap cuts a long `sh -c` recipe (automake's
# generated headers run past 4096 bytes), and its replay fails on a truncated script.
MAX_ARG_STRLEN = 32 * os.sysconf("SC_PAGE_SIZE")
# Signals whose delivery lines would only add noise: one SIGCHLD per finished job, and the
# jitter engine's stops and continues. `signal=none` is not used because it also hides
# `+++ killed by SIGX +++`, the only record of a job dying by a signal.
QUIET_SIGNALS = "!SIGCHLD,SIGSTOP,SIGCONT,SIGTSTP,SIGTTIN,SIGTTOU,SIGWINCH"
# Only these calls need structures decoded (argv, clone3 and openat2 flags, connect's
# address family); skipping the others' saves strace a memory read per stat.
DECODED = "execve,execveat,clone3,openat2,connect"
# A step is replayed with the environment it really had (make's `export`s, a wrapper's
# PYTHONPATH): print execve's environment in full instead of `/* 38 vars */`.
UNABBREVIATED = "!execve,execveat"
# strace stats /etc/localtime twice per line when TZ is unset (its timestamps call
# localtime). Give strace alone a TZ, and `-E TZ` removes it again for the build, so the
# build sees exactly the environment it was started with.
TZ_TRAMPOLINE = 'if [ -z "${TZ+set}" ]; then s=$1; shift; TZ=UTC0 exec "$s" -E TZ "$@"; fi; exec "$@"'


def wrap(argv: list[str], trace_path: str) -> list[str]:
    """The argv that runs `argv` under strace, writing the trace to `trace_path`.

    `-q` (not `-qq`) keeps the `+++ exited with N +++` / `+++ killed by SIG +++` lines.
    `-y` annotates every fd (and AT_FDCWD) with its path, which resolves `*at` calls and
    fchdir exactly.
    """
    # fmt: off
    return [
        "/bin/sh", "-c", TZ_TRAMPOLINE, "strace",
        STRACE.require(),
        "-f",
        "--seccomp-bpf",
        "-ttt",
        "-y",
        "-q",
        "-s", str(MAX_ARG_STRLEN),
        "-o", trace_path,
        "-e", "signal=" + QUIET_SIGNALS,
        "-e", "verbose=" + DECODED,
        "-e", "abbrev=" + UNABBREVIATED,
        "-e", "trace=" + ",".join(TRACED_SYSCALLS),
        "--",
        *argv,
    ]
    # fmt: on


@functools.cache
def _traces() -> str | None:
    """None when strace can trace a process here (ptrace permitted), else why not (cached: it runs `true`)."""
    try:
        proc = subprocess.run(wrap(["true"], "/dev/null"), capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"strace could not run: {exc}"
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        reason = lines[-1] if lines else f"exit status {proc.returncode}"
        return f"strace cannot trace here (ptrace not permitted?): {reason}"
    return None
