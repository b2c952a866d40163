"""Debian's upload records, which differ between identical builds by design.

A `.buildinfo` records when it was made (`Build-Date`) and the environment of the build
(`Environment:` `DEB_BUILD_OPTIONS="parallel=4"`, `MAKEFLAGS`...), which buildfuzz varies
on purpose; the `.changes` lists the `.buildinfo`'s checksums and size. A variant that
differs from the reference's only there says nothing about the packages: it is set aside,
said in one line ("differs only in Build-Date, as it always does"), and never a finding.
Anything else that differs keeps it a finding: a `.buildinfo` whose `Checksums-Sha256`
name a `.deb` with other bytes, a `.changes` listing another `.deb`, a field added. Files
are read as deb822 paragraphs (`Field: value`, continuation lines indented); a signed file
(`-----BEGIN PGP SIGNED MESSAGE-----`) is judged as text, like any other, and stays a finding.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

PACKAGE_METADATA = (".buildinfo", ".changes")
BUILD_DATE = "Build-Date"
ENVIRONMENT = "Environment"
CHECKSUMS = ("Checksums-Md5", "Checksums-Sha1", "Checksums-Sha256", "Files")
BUILDINFO_CHECKSUMS = "the .buildinfo's checksums"
USUAL = ", as it always does"


def is_package_metadata(path: str) -> bool:
    return path.endswith(PACKAGE_METADATA)


@dataclass(frozen=True)
class Expected:
    """What a variant differs from the reference's in, all of it expected."""

    parts: tuple[str, ...]  # ("Build-Date", "the environment it records (MAKEFLAGS), which buildfuzz varies")
    needs: tuple[str, ...] = ()  # the .buildinfo files (paths beside it) that must be identical or set aside too


def expected_difference(path: str, reference: bytes, variant: bytes) -> Expected | None:
    """What the variant differs from the reference in, when that is only what differs in
    every build; None when it differs in anything else, or is no deb822 file."""
    fields_a, fields_b = _fields(reference), _fields(variant)
    if fields_a is None or fields_b is None or [k for k, _ in fields_a] != [k for k, _ in fields_b]:
        return None
    parts: list[str] = []
    needs: list[str] = []
    for (name, a), (_, b) in zip(fields_a, fields_b):
        if a == b:
            continue
        what = _expected_field(path, name, a, b)
        if what is None:
            return None
        parts.append(what[0])
        needs.extend(what[1])
    return Expected(tuple(dict.fromkeys(parts)), tuple(dict.fromkeys(needs))) if parts else None


def _expected_field(path: str, name: str, a: str, b: str) -> tuple[str, tuple[str, ...]] | None:
    if name == BUILD_DATE and path.endswith(".buildinfo"):
        return BUILD_DATE, ()
    if name == ENVIRONMENT and path.endswith(".buildinfo"):
        changed = sorted(_variables(a).items() ^ _variables(b).items())
        return f"the environment it records ({', '.join(dict.fromkeys(k for k, _ in changed))}), which buildfuzz varies", ()
    if name in CHECKSUMS and path.endswith(".changes"):
        lines_a, lines_b = set(a.splitlines()), set(b.splitlines())
        names = {line.split()[-1] for line in lines_a ^ lines_b if line.strip()}
        if names and all(n.endswith(".buildinfo") for n in names):
            return BUILDINFO_CHECKSUMS, tuple(posixpath.join(posixpath.dirname(path), n) for n in sorted(names))
    return None


def _fields(data: bytes) -> list[tuple[str, str]] | None:
    """deb822 fields in order, a multi-line value with its continuation lines."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fields: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and fields:
            fields[-1] = (fields[-1][0], fields[-1][1] + "\n" + line)
        elif ":" in line and not line.startswith(("-", "#")):
            name, _, value = line.partition(":")
            fields.append((name, value.strip()))
        elif line.strip():
            return None  # not deb822 (a PGP armour, a stray line): judged as any text file
    return fields or None


def _variables(value: str) -> dict[str, str]:
    return dict(line.strip().partition("=")[::2] for line in value.splitlines() if "=" in line)


def described(parts: tuple[str, ...] | list[str]) -> str:
    """"Build-Date and the environment it records (...)": what a set-aside file differs in."""
    return " and ".join(parts)
