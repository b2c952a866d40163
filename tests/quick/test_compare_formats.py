"""The comparators look inside archives, ELF files, bytecode and text: which members
differ in content, and whether the rest differs only in metadata."""

import gzip
import io
import lzma
import subprocess
import tarfile
import zipfile

import pytest
import zstandard

from fuzzer.compare.inside import Context, compare_bytes, look_inside


def _zip(members, stamp=(2020, 1, 1, 0, 0, 0), order=None):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in order or members:
            z.writestr(zipfile.ZipInfo(name, stamp), members[name])
    return out.getvalue()


def _tar(members, mtime=0, owner=0):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.uid = len(data), mtime, owner
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _ar(members, mtime=0):
    out = [b"!<arch>\n"]
    for name, data in members.items():
        out.append(f"{name + '/':<16}{mtime:<12}{0:<6}{0:<6}{644:<8}{len(data):<10}`\n".encode())
        out.append(data + (b"\n" if len(data) % 2 else b""))
    return b"".join(out)


def _compare(a, b, name="x"):
    return compare_bytes(a, b, Context(name))


MEMBERS = {f"pkg/m{i}.py": f"x = {i}\n".encode() for i in range(44)}


def test_wheel_differing_only_in_timestamps_is_metadata():
    found = _compare(_zip(MEMBERS), _zip(MEMBERS, stamp=(2021, 6, 1, 0, 0, 0)), "dist/x.whl")
    assert found.summary == "44 members identical in content; only zip entry timestamps differ"
    assert found.metadata_only and found.identical == 44


def test_zip_member_order_is_metadata_and_a_changed_member_is_named():
    order = sorted(MEMBERS, reverse=True)
    assert _compare(_zip(MEMBERS), _zip(MEMBERS, order=order)).metadata == ("member order",)
    changed = {**MEMBERS, "pkg/m3.py": b"x = 'other'\n"}
    found = _compare(_zip(MEMBERS), _zip(changed))
    assert found.members == ("pkg/m3.py",) and found.identical == 43 and not found.metadata_only
    assert any("pkg/m3.py: text: 1 of 1 lines differ, 1 in their place" in line for line in found.details)


@pytest.mark.parametrize("wrap", [lambda d: gzip.compress(d, mtime=1), lzma.compress,
                                  lambda d: zstandard.ZstdCompressor().compress(d)], ids=["gz", "xz", "zst"])
def test_compressed_tar_mtimes_are_metadata(wrap):
    members = {"usr/share/doc/a": b"a", "usr/share/doc/b": b"b"}
    found = _compare(wrap(_tar(members, mtime=1)), wrap(_tar(members, mtime=2)))
    assert found.format.startswith("tar.") and found.metadata_only
    assert found.metadata == ("tar member mtimes",)


def test_gzip_header_alone_is_metadata():
    found = _compare(gzip.compress(b"same\n", mtime=1), gzip.compress(b"same\n", mtime=2))
    assert found.metadata_only and found.metadata == ("gzip header mtime",)


def test_deb_shaped_ar_names_the_one_inner_member_that_differs():
    data = {"usr/lib/libfoo.so": b"\x00" * 10, "usr/share/doc/README": b"readme"}
    control = lzma.compress(_tar({"control": b"Package: foo\n"}))

    def deb(lib, mtime):
        inner = lzma.compress(_tar({**data, "usr/lib/libfoo.so": lib}, mtime=mtime))
        return _ar({"debian-binary": b"2.0\n", "control.tar.xz": control, "data.tar.xz": inner}, mtime=mtime)

    found = _compare(deb(b"\x00" * 10, 1), deb(b"\x01" * 10, 2), "../foo.deb")
    assert found.members == ("data.tar.xz/usr/lib/libfoo.so",)
    assert found.identical == 2 and "ar member mtimes" in found.metadata and "tar member mtimes" in found.metadata


def test_pyc_header_only_is_metadata():
    code = b"\xe3" + bytes(range(40))
    head = lambda mtime: b"\xa7\r\r\n" + b"\0" * 4 + mtime.to_bytes(4, "little") + (10).to_bytes(4, "little")
    found = _compare(head(1) + code, head(2) + code, "m.cpython-311.pyc")
    assert found.format == "pyc" and found.metadata_only and found.metadata == ("pyc source mtime",)
    assert _compare(head(1) + code, head(1) + code[:-1] + b"\x99", "m.pyc").content_differs


def test_buildinfo_is_text_not_a_hex_dump():
    a = b"Format: 1.0\nSource: hello\nBuild-Date: Mon, 01 Dec 2026 19:00:00 +0000\n"
    b = a.replace(b"19:00:00", b"19:05:00")
    found = _compare(a, b, "../hello_2.10-3_amd64.buildinfo")
    assert found.format == "text" and found.summary == "1 of 3 lines differ, 1 in their place (first at line 3)"
    assert "+Build-Date: Mon, 01 Dec 2026 19:05:00 +0000" in found.details


ASM = ".text\n.globl entry\nentry:\n{labels}  ret\n"


@pytest.mark.needs("gcc")
def test_elf_local_symbols_renumbered_with_the_same_build_id(tmp_path):
    """The seed's shape: only the numbering of local labels differs."""
    paths = []
    for variant, order in (("a", range(30)), ("b", reversed(range(30)))):
        source = tmp_path / f"{variant}.s"
        source.write_text(ASM.format(labels="".join(f"__local{n}:\n  nop\n" for n in order)))
        out = tmp_path / variant / "libfoo.so"
        out.parent.mkdir()
        subprocess.run(["gcc", "-shared", "-nostdlib", "-Wl,--build-id", "-o", out, source], check=True,
                       capture_output=True)
        paths.append(str(out))
    found = look_inside(*paths, "libfoo.so")
    assert found.format == "elf"
    assert "local symbols renumbered" in found.summary and "code sections identical" in found.summary
    assert "build-id identical" in found.summary


def _nested(leaf: bytes, levels: int) -> bytes:
    for _ in range(levels):
        leaf = _zip({"nested.zip": leaf})
    return leaf


def test_member_above_the_depth_limit_is_bytes_with_a_note():
    found = _compare(_nested(b"leaf one", 8), _nested(b"leaf two", 8))
    assert found.content_differs and any("nested deeper than" in note for note in found.notes)
