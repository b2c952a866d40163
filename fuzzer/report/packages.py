"""The package files a campaign compared: what a green verdict vouches for, by name.

A package file is a build's deliverable recognised by its name: Debian packages and their
upload records (`.deb`, `.udeb`, `.ddeb`, `.dsc`, `.buildinfo`, `.changes`), Python wheels,
eggs and source archives, any tarball (`.tar`, `.tgz`, `.tar.*`), `.zip`, `.jar`, `.rpm`,
`.apk`, `.gem`, `.nupkg`, `.crate`. A file the source tree already held with the same
content (test data, a vendored tarball) is the source's, not the build's, and is not listed.
Their digests are sha256 (fuzzer/observe.py hashes package files so): what users compare
with published checksums.
"""

from __future__ import annotations

import os
from pathlib import Path

from fuzzer.observe import Manifest, hash_file, is_package
from fuzzer.report.model import PackageFile

__all__ = ["is_package", "package_files", "packages_line"]
SHOWN_IN_TEXT = 6


def package_files(reference: Manifest | None, selected: list[Manifest], source: Path) -> list[PackageFile]:
    """Each package file of the reference build (its compared files; None when it failed):
    its size and digest there, and how many distinct contents it had across the successful
    runs' compared files, `selected` (1: identical in every one)."""
    if reference is None:
        return []
    found = []
    for path, entry in sorted(reference.entries.items()):
        if entry.kind != "file" or not is_package(path) or _from_source(source, path, entry.digest):
            continue
        digests = {m.entries[path].digest if path in m.entries else None for m in selected}
        found.append(PackageFile(path, entry.size, entry.digest, len(digests), len(selected)))
    return found


def packages_line(packages: list[PackageFile]) -> str:
    """One line for the text report: every package named, with its verdict."""
    shown = [f"{p.path} ({p.size:,} bytes, sha256 {p.digest[:12]}, "
             + (f"identical in {p.runs} runs)" if p.variants == 1 else f"{p.variants} variants in {p.runs} runs)")
             for p in packages[:SHOWN_IN_TEXT]]
    more = f" and {len(packages) - SHOWN_IN_TEXT} more" if len(packages) > SHOWN_IN_TEXT else ""
    return f"packages compared: {', '.join(shown)}{more}"


def _from_source(source: Path, path: str, digest: str) -> bool:
    if path.startswith(("../", "/")):
        return False
    original = os.path.join(source, path)
    return os.path.isfile(original) and not os.path.islink(original) and hash_file(original) == digest
