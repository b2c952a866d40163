"""The files inside an archive, by name and content digest, nested archives opened: what
leads a member (`data.tar.xz/usr/lib/libfoo.so` of a `.deb`) back to the file it was made
from, by the same content digest the manifests give the build's files. Read as `inside.py` reads,
from memory and within its limits; an archive that cannot be read safely lists nothing."""

from __future__ import annotations

import io
from typing import BinaryIO

from fuzzer.compare.inside import MAX_DEPTH, Context, Unsafe


def file_members(path: str) -> dict[str, str]:
    """Nested member name → content digest (as the manifests give it), for every regular file inside (an
    archive inside is listed by its own members, not by itself); {} for a file that is no
    archive or cannot be read safely."""
    try:
        with open(path, "rb") as stream:
            return _listed(stream, Context(path)) or {}
    except (OSError, Unsafe):
        return {}
    except Exception:  # noqa: BLE001 - a hostile archive may break any parser anywhere; nothing listed
        return {}


def _listed(stream: BinaryIO, ctx: Context) -> dict[str, str] | None:
    """None: not an archive (the caller lists the file itself)."""
    from fuzzer.compare import formats

    head = stream.read(512)
    stream.seek(0)
    fmt = formats.sniff(ctx.name, head)
    if not isinstance(fmt, formats.Container) or not fmt.CONTAINER or ctx.depth > MAX_DEPTH:
        return None
    found: dict[str, str] = {}
    for member in fmt.members(stream, ctx):
        if member.kind != "file":
            continue
        inner = _listed(io.BytesIO(member.data), ctx.inner(member.name)) if member.data is not None else None
        for name, digest in (inner.items() if inner is not None else [("", member.digest)]):
            found["/".join(part for part in (member.name, name) if part)] = digest
    return found
