"""Build systems' bookkeeping: files a build system keeps for itself, which differ between
identical builds by design.

Meson's `meson-private/coredata.dat` and `build.dat` hold random uuid4 GUIDs, its
`meson-logs/meson-log.txt` a start time and random check-directory names; ninja's
`.ninja_log` holds each edge's start and end times, `.ninja_deps` follows the order edges
finished in; CMake's configure logs quote its random `TryCompile-XXXXXX` scratch names;
autotools' `config.log` quotes the compiler's `/tmp/ccXXXXXX` files, and `config.status`
and `autom4te.cache/` are configure's own state. A difference in them that reaches what the
build delivers (config.status writes config.h) shows in that file too, which counts.

They are compared like every file, and a variant that differs from the reference's is
settled (counted as the reference's, as an upload record that differs only in its
Build-Date is: `fuzzer/explain/builds.Selection.settled`), so they do not decide the
verdict; the report names them in one line. `--count-bookkeeping` counts them like any
file, and localization then names their writers.
"""

from __future__ import annotations

from fuzzer.observe import Manifest, matches_any

# (build system, .gitignore-style globs): the one list, said once
TOOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Meson", ("meson-logs/", "**/meson-private/*.dat")),
    ("ninja", (".ninja_log", ".ninja_deps")),
    ("CMake", ("**/CMakeFiles/CMakeConfigureLog.yaml", "**/CMakeFiles/CMakeOutput.log",
               "**/CMakeFiles/CMakeError.log", "**/CMakeFiles/CMakeScratch/")),
    ("autotools", ("config.log", "config.status", "autom4te.cache/")),
)
GLOBS = tuple(glob for _, globs in TOOLS for glob in globs)


def is_bookkeeping(path: str) -> bool:
    return matches_any(path, GLOBS)


def tool_of(path: str) -> str:
    """The build system whose bookkeeping `path` is ("" when none's)."""
    return next((tool for tool, globs in TOOLS if matches_any(path, globs)), "")


def settled(manifest: Manifest, reference: Manifest) -> Manifest:
    """`manifest` with its bookkeeping as the reference's: the reference's bookkeeping entries,
    and none other. Both are compared manifests (the same files selected)."""
    ours = {path for path in manifest.entries if is_bookkeeping(path)}
    theirs = {path: entry for path, entry in reference.entries.items() if is_bookkeeping(path)}
    if not ours and not theirs:
        return manifest
    entries = {path: entry for path, entry in manifest.entries.items() if path not in ours}
    return Manifest({**entries, **theirs}, manifest.algorithm)
