"""observe: what a build left behind, as a manifest of content digests.

Every regular file and symlink under the workspace, path → `Entry`. Symlinks are
recorded by their target text and never followed, so nothing outside the workspace is
read. FIFOs, sockets and device nodes are recorded by their type (a device also by its
number) and never opened: reading a copy of /dev/zero never ends, opening a FIFO blocks.

Content digests are xxh3-128 (xxhash): a build compared with itself needs no defence
against forged collisions, only against accidental ones (2^-64 for 2^32 files), and xxh3
hashes faster than a file can be read, so observing a build costs about reading it once
(bench/bench_hash.py). blake3 was measured too: on the 2-CPU machine this was chosen on
(AVX2, SHA extensions) it hashed a buffer 1.2x as fast as sha256, xxh3 5.6x as fast as blake3.
Package files keep sha256: it is what their users compare with published checksums, and
they are few. Files are hashed one after another: xxhash holds the GIL, and a thread pool
measured slower than one thread (bench/bench_hash.py shows both).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Iterable, Iterator

import msgspec
import pathspec
import xxhash

# How a manifest's content digests were made, recorded with every stored manifest: digests
# of different schemes are never compared. Changing the hash, or which names are packages
# (PACKAGE_NAME), changes digests: give the scheme a new name then.
ALGORITHM = "xxh3-128/packages:sha256"
PACKAGE_ALGORITHM = "sha256"
SMALL_FILE = 1 << 20  # read whole in one call: no hasher loop, no buffer reuse needed
SPECIAL_KINDS = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "char-device", stat.S_IFBLK: "block-device"}

# a build's deliverables, by name (fuzzer/report/packages.py lists them in the report)
PACKAGE_NAME = re.compile(
    r"\.(deb|udeb|ddeb|dsc|buildinfo|changes|whl|egg|tar|tgz|tbz2|txz|zip|jar|rpm|apk|gem|nupkg|crate)$"
    r"|\.tar\.[A-Za-z0-9]+$")


class Entry(msgspec.Struct, frozen=True, array_like=True, forbid_unknown_fields=True):
    """Stored as the list [kind, digest, executable, size, mtime_ns] (array_like): a
    manifest holds one per file, and names repeated per entry would double its size."""

    kind: str  # "file", "symlink", or one of SPECIAL_KINDS
    digest: str  # content digest, the link target for a symlink, the type (and number) of a special file
    executable: bool = False
    size: int = 0
    mtime_ns: int = 0  # not part of identity; evidence for order-dependent steps

    def identity(self) -> tuple[str, str, bool]:
        return (self.kind, self.digest, self.executable)


Entries = dict[str, Entry]  # a manifest as stored: path → entry (fuzzer.structs encodes and decodes it)


class Manifest(msgspec.Struct, frozen=True):
    entries: Entries
    algorithm: str = ALGORITHM  # how the entries' content digests were made

    def digest(self) -> str:
        """One digest over every entry's identity: equal manifests, equal digests."""
        h = hashlib.sha256()
        for path in sorted(self.entries):
            kind, digest, executable = self.entries[path].identity()
            h.update(f"{path}\0{kind}\0{digest}\0{int(executable)}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def differing(self, other: "Manifest") -> list[str]:
        """Paths whose identity differs, or that exist in only one of the two."""
        self._check_comparable(other)

        def identity(manifest: Manifest, path: str):
            entry = manifest.entries.get(path)
            return entry.identity() if entry else None

        paths = self.entries.keys() | other.entries.keys()
        return sorted(p for p in paths if identity(self, p) != identity(other, p))

    def select(self, artifacts: Iterable[str] = (), ignore: Iterable[str] = ()) -> "Manifest":
        artifacts, ignore = list(artifacts), list(ignore)
        return Manifest({
            path: entry
            for path, entry in self.entries.items()
            if (not artifacts or matches_any(path, artifacts)) and not matches_any(path, ignore)
        }, self.algorithm)

    def joined(self, other: "Manifest") -> "Manifest":
        """Both manifests' entries (their paths never overlap: the tree's are relative)."""
        self._check_comparable(other)
        return Manifest({**self.entries, **other.entries}, self.algorithm)

    def _check_comparable(self, other: "Manifest") -> None:
        # digests of two schemes differ for equal bytes: comparing them would invent divergences
        if other.algorithm != self.algorithm:
            raise ValueError(f"manifests hashed with {self.algorithm} and {other.algorithm} cannot be compared")


def matches_any(path: str, globs: Iterable[str]) -> bool:
    """Whether `.gitignore` lines would match the relative path: `*.o` matches at any depth,
    `build/*.o` only directly under build/, `a/**/b.o` also `a/b.o`, `out/` everything under
    out/, and a later `!pattern` takes a file back."""
    return _spec(tuple(globs)).match_file(path)


@functools.lru_cache(maxsize=64)
def _spec(globs: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    # compiled once per glob list: a campaign selects every run's manifest with the same lists
    return pathspec.GitIgnoreSpec.from_lines(globs)


def take_manifest(root: Path, skip: Iterable[str] = (), only: Iterable[str] | None = None) -> Manifest:
    """Hash every file under `root`. `skip` names relative directories not to enter;
    `only`, when given, the names directly under `root` to look at (the rest are not)."""
    skip = set(skip)
    entries: dict[str, Entry] = {}
    for rel, st in _walk(str(root), "", skip, None if only is None else set(only)):
        if stat.S_ISLNK(st.st_mode):
            entries[rel] = Entry("symlink", os.readlink(os.path.join(root, rel)), size=0, mtime_ns=st.st_mtime_ns)
        elif stat.S_ISREG(st.st_mode):
            digest = hash_file(os.path.join(root, rel))
            entries[rel] = Entry("file", digest, bool(st.st_mode & 0o111), st.st_size, st.st_mtime_ns)
        elif kind := special_kind(st.st_mode):
            entries[rel] = Entry(kind, _special_identity(kind, st), mtime_ns=st.st_mtime_ns)
    return Manifest(entries)


def special_kind(mode: int) -> str | None:
    """"fifo", "socket", "char-device" or "block-device": files never to be opened; else None."""
    return SPECIAL_KINDS.get(stat.S_IFMT(mode))


def _special_identity(kind: str, st: os.stat_result) -> str:
    if kind.endswith("-device"):
        return f"{kind} {os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    return kind


def _walk(root: str, rel: str, skip: set[str], only: set[str] | None = None) -> Iterator[tuple[str, os.stat_result]]:
    with os.scandir(os.path.join(root, rel) if rel else root) as it:
        for entry in it:
            if only is not None and entry.name not in only:
                continue
            path = f"{rel}/{entry.name}" if rel else entry.name
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                if path not in skip:
                    yield from _walk(root, path, skip)
            else:
                yield path, st


def is_package(path: str) -> bool:
    return PACKAGE_NAME.search(path.rsplit("/", 1)[-1]) is not None


def hasher(path: str):
    """A new hasher of the content digest take_manifest records for a file named `path`."""
    return hashlib.new(PACKAGE_ALGORITHM) if is_package(path) else xxhash.xxh3_128()


def has_digest(data: bytes, digest: str) -> bool:
    """Whether `data` has `digest`, under the scheme that made it: a sha256 is 64 hex digits
    (a package file), an xxh3-128 32 (any other file)."""
    made = hashlib.new(PACKAGE_ALGORITHM, data) if len(digest) == 64 else xxhash.xxh3_128(data)
    return made.hexdigest() == digest


# an empty file's digest under either scheme: no evidence that one file is a copy of another
EMPTY_DIGESTS = frozenset({hashlib.new(PACKAGE_ALGORITHM, b"").hexdigest(), xxhash.xxh3_128_hexdigest(b"")})


def hash_file(path: str) -> str:
    """A file's content digest under ALGORITHM: sha256 for a package file, else xxh3-128."""
    with open(path, "rb", buffering=0) as f:
        if is_package(path):
            return hashlib.file_digest(f, PACKAGE_ALGORITHM).hexdigest()
        if os.fstat(f.fileno()).st_size < SMALL_FILE:  # read() sizes its one buffer by fstat
            return xxhash.xxh3_128_hexdigest(f.read())
        return hashlib.file_digest(f, xxhash.xxh3_128).hexdigest()
