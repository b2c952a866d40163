"""Hostile archives: corrupt, truncated, bombs, too deep, members named `/x` or `../x`.
Each is compared as bytes with a one-line note, never a traceback, never a file written."""

import gzip
import io
import lzma
import tarfile
import zipfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzer.compare.inside import Context, Inside, compare_bytes
from test_compare_formats import _ar, _tar, _zip

MEMBERS = {"pkg/__init__.py": b"x = 1\n", "pkg/data.bin": bytes(range(256)) * 4}
SAMPLES = {
    "zip": _zip(MEMBERS),
    "tar.gz": gzip.compress(_tar(MEMBERS), mtime=0),
    "tar.xz": lzma.compress(_tar(MEMBERS)),
    "deb": _ar({"debian-binary": b"2.0\n", "data.tar.xz": lzma.compress(_tar(MEMBERS))}),
}


def _check(found: Inside) -> None:
    assert isinstance(found, Inside) and found.summary
    assert all("\n" not in note for note in found.notes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(SAMPLES)), cut=st.integers(0, 4000),
       flips=st.lists(st.tuples(st.integers(0, 4000), st.integers(1, 255)), max_size=4))
def test_corrupt_or_truncated_archives_never_raise(kind, cut, flips):
    good = SAMPLES[kind]
    bad = bytearray(good[:cut % (len(good) + 1)] if cut < len(good) else good)
    for offset, xor in flips:
        if bad:
            bad[offset % len(bad)] ^= xor
    _check(compare_bytes(good, bytes(bad), Context(f"x.{kind}")))
    _check(compare_bytes(bytes(bad), good, Context(f"x.{kind}")))


def _tar_named(name: str, data: bytes) -> bytes:
    """tarfile strips a leading "/" when it writes a name: this header keeps it."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as t:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return out.getvalue()


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["/etc/passwd", "../escape", "a/../../escape", "./../x"]),
       kind=st.sampled_from(["zip", "tar", "ar"]))
def test_members_with_absolute_or_parent_paths_are_compared_as_bytes(name, kind):
    make = {"zip": lambda n, d: _zip({n: d}), "tar": _tar_named, "ar": lambda n, d: _ar({n: d})}[kind]
    a, b = make(name, b"one"), make(name, b"two")
    found = compare_bytes(a, b, Context(f"x.{kind}"))
    assert found.format == "bytes"
    assert any("absolute or parent-relative path" in note for note in found.notes)


def test_zip_bomb_is_compared_as_bytes():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("zeros", b"\0" * (64 << 20))
    bomb = out.getvalue()
    found = compare_bytes(bomb, bomb[:-1] + b"\1", Context("bomb.zip"))
    assert found.format == "bytes" and any("compression bomb" in note for note in found.notes)


def test_gzip_bomb_is_compared_as_bytes():
    a, b = gzip.compress(b"\0" * (64 << 20), mtime=1), gzip.compress(b"\0" * (64 << 20), mtime=2)
    found = compare_bytes(a, b, Context("zeros.gz"))
    assert found.format == "bytes" and any("compression bomb" in note for note in found.notes)


def test_nothing_is_extracted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inside").mkdir()
    monkeypatch.chdir(tmp_path / "inside")
    compare_bytes(_zip({"../escaped": b"1"}), _zip({"../escaped": b"2"}), Context("x.zip"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["inside"]
