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
from typing import Callable

from fuzzer.compare.package_metadata import described
from fuzzer.model import ArtifactFinding, PackageFile
from fuzzer.observe import Manifest, hash_file, is_package

SHOWN_IN_TEXT = 6


def package_files(reference: Manifest | None, selected: list[Manifest], source: Path,
                  expected: Callable[[str], tuple[str, ...]] = lambda path: ()) -> list[PackageFile]:
    """Each package file of the reference build (its compared files; None when it failed):
    its size and digest there, and how many distinct contents it had across the successful
    runs' compared files, `selected` (1: identical in every one); `expected(path)`: what its
    variants differ in when only what differs in every build (a .buildinfo's Build-Date)."""
    if reference is None:
        return []
    found = []
    for path, entry in sorted(reference.entries.items()):
        if entry.kind != "file" or not is_package(path) or _from_source(source, path, entry.digest):
            continue
        digests = {m.entries[path].digest if path in m.entries else None for m in selected}
        found.append(PackageFile(path, entry.size, entry.digest, len(digests), len(selected),
                                 list(expected(path)) if len(digests) > 1 else []))
    return found


def packages_line(packages: list[PackageFile]) -> str:
    """One line for the text report: every package named, with its verdict."""
    shown = [f"{p.path} ({p.size:,} bytes, sha256 {p.digest[:12]}, {package_verdict(p)})" for p in packages[:SHOWN_IN_TEXT]]
    more = f" and {len(packages) - SHOWN_IN_TEXT} more" if len(packages) > SHOWN_IN_TEXT else ""
    return f"packages compared: {', '.join(shown)}{more}"


def package_verdict(p: PackageFile) -> str:
    """"identical in 4 runs", "4 variants in 4 runs: only Build-Date, as in every build"."""
    if p.variants == 1:
        return f"identical in {p.runs} runs"
    usual = f": only {described(p.expected)}, as in every build" if p.expected else ""
    return f"{p.variants} variants in {p.runs} runs{usual}"


def set_aside_line(packages: list[PackageFile]) -> str:
    """One line when upload records were set aside ("" otherwise): "the 2 .deb files are
    identical in all 4 runs; ../x.buildinfo differs only in Build-Date, as it always does"."""
    aside = [p for p in packages if p.expected]
    if not aside:
        return ""
    others = [p for p in packages if not p.expected]
    identical = [p for p in others if p.variants == 1]
    verb = "is" if len(identical) == 1 else "are"
    parts = [f"{_kinds(identical)} {verb} identical in all {identical[0].runs} runs"] if identical else []
    parts += [f"{p.path} has {p.variants} variants in {p.runs} runs" for p in others if p.variants > 1]
    parts += [f"{p.path} differs only in {described(p.expected)}, as it always does" for p in aside]
    return "; ".join(parts)


def _kinds(packages: list[PackageFile]) -> str:
    """"the .deb file", "the 2 .deb files", "the 3 package files"."""
    suffixes = {p.path.rsplit(".", 1)[-1] for p in packages}
    kind = f".{suffixes.pop()} file" if len(suffixes) == 1 else "package file"
    return f"the {kind}" if len(packages) == 1 else f"the {len(packages)} {kind}s"


def inside_lines(artifact: ArtifactFinding) -> list[str]:
    """What the comparators saw inside a divergent artifact, member by member, and the
    metadata stabiliser's test: the same lines in every report format."""
    if artifact.inside is None:
        return []
    tested = artifact.metadata_stabilizer
    return [f"{artifact.inside.format}: {artifact.inside.summary}"] + ([tested.evidence] if tested and tested.evidence
                                                                       else [])


def _from_source(source: Path, path: str, digest: str) -> bool:
    if path.startswith(("../", "/")):
        return False
    original = os.path.join(source, path)
    return os.path.isfile(original) and not os.path.islink(original) and hash_file(original) == digest
