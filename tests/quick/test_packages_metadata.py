"""Debian's upload records set aside when they differ only as they do in every build
(fuzzer/compare/package_metadata.py, campaign/evidence.py's settled manifests)."""

import hashlib
from pathlib import Path

from fuzzer.campaign.evidence import Evidence
from fuzzer.compare.package_metadata import BUILDINFO_CHECKSUMS, Expected, expected_difference
from fuzzer.model import PackageFile
from fuzzer.observe import Entry, Manifest
from fuzzer.report.packages import packages_line, set_aside_line

DEB = "3833e140df6c" + "0" * 52


def buildinfo(date="Wed, 02 Dec 2026 00:12:34 +0000", jobs=1, deb=DEB) -> bytes:
    return f"""Format: 1.0
Source: hello
Binary: hello
Architecture: amd64
Version: 2.10-3
Checksums-Sha256:
 {deb} 53172 hello_2.10-3_amd64.deb
Build-Origin: Debian
Build-Architecture: amd64
Build-Date: {date}
Build-Path: /w/hello-2.10
Installed-Build-Depends:
 autoconf (= 2.71-3),
 gcc-12 (= 12.2.0-14)
Environment:
 DEB_BUILD_OPTIONS="parallel={jobs}"
 LANG="C.UTF-8"
 MAKEFLAGS="-j{jobs}"
 SOURCE_DATE_EPOCH="1658700000"
""".encode()


def changes(buildinfo_sha="ab" * 32, size=5123, deb=DEB) -> bytes:
    return f"""Format: 1.8
Date: Sun, 24 Jul 2022 21:32:13 +0200
Source: hello
Binary: hello
Checksums-Sha256:
 {deb} 53172 hello_2.10-3_amd64.deb
 {buildinfo_sha} {size} hello_2.10-3_amd64.buildinfo
Files:
 0123456789abcdef0123456789abcdef 53172 devel optional hello_2.10-3_amd64.deb
 {buildinfo_sha[:32]} {size} devel optional hello_2.10-3_amd64.buildinfo
""".encode()


def test_a_buildinfo_differing_in_its_build_date_and_job_counts_is_set_aside():
    found = expected_difference("../hello_2.10-3_amd64.buildinfo", buildinfo(), buildinfo("Wed, 02 Dec 2026 00:13:01 +0000", 4))
    assert found.needs == () and found.parts == ("Build-Date", "the environment it records (DEB_BUILD_OPTIONS, MAKEFLAGS), which buildfuzz varies")


def test_a_buildinfo_naming_a_deb_with_other_bytes_is_not_set_aside():
    other = buildinfo("Wed, 02 Dec 2026 00:13:01 +0000", deb="ff" * 32)
    assert expected_difference("../hello_2.10-3_amd64.buildinfo", buildinfo(), other) is None


def test_a_buildinfo_with_another_field_is_not_set_aside():
    other = buildinfo().replace(b"Build-Path:", b"Build-Tainted-By:\n usr-local-has-programs\nBuild-Path:")
    assert expected_difference("../hello_2.10-3_amd64.buildinfo", buildinfo(), other) is None


def test_a_signed_buildinfo_is_judged_as_text():
    signed = b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n" + buildinfo()
    assert expected_difference("../hello_2.10-3_amd64.buildinfo", signed, signed.replace(b"00:12:34", b"00:13:01")) is None


def test_a_changes_differs_only_in_the_buildinfos_checksums_which_must_be_set_aside_too():
    a, b = changes(), changes("cd" * 32, 5125)
    assert expected_difference("../h.changes", a, b) == Expected((BUILDINFO_CHECKSUMS,),
                                                                 ("../hello_2.10-3_amd64.buildinfo",))
    assert expected_difference("../h.changes", a, changes("cd" * 32, 5125, deb="ff" * 32)) is None


def test_the_date_of_a_changes_is_no_build_date():
    a = changes()
    assert expected_difference("../hello_2.10-3_amd64.changes", a, a.replace(b"21:32:13", b"21:32:14")) is None


# the reference tree's copies, named by their real digests: the reference's bytes are read only when they have them
B1, C1 = (hashlib.sha256(data).hexdigest() for data in (buildinfo(), changes()))


def _evidence(tmp_path: Path, variants: dict[str, bytes]) -> Evidence:
    evidence = Evidence(tmp_path)
    reference = evidence.reference_tree.parent
    reference.mkdir(parents=True)
    (reference / "hello_2.10-3_amd64.buildinfo").write_bytes(buildinfo())
    (reference / "hello_2.10-3_amd64.changes").write_bytes(changes())
    for digest, data in variants.items():
        evidence.blob(digest).parent.mkdir(parents=True, exist_ok=True)
        evidence.blob(digest).write_bytes(data)
    return evidence


def _manifest(**digests) -> Manifest:
    names = {"buildinfo": "../hello_2.10-3_amd64.buildinfo", "changes": "../hello_2.10-3_amd64.changes", "deb": "../h.deb"}
    return Manifest({names[k]: Entry("file", v, size=100) for k, v in digests.items()})


def test_a_settled_manifest_gives_the_reference_entries_so_the_digests_match(tmp_path):
    evidence = _evidence(tmp_path, {"b2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000"), "c2": changes("cd" * 32),
                                    "b3": buildinfo(deb="ff" * 32)})
    reference = _manifest(buildinfo=B1, changes=C1, deb="d1")
    settled = evidence.settled(_manifest(buildinfo="b2", changes="c2", deb="d1"), reference)
    assert settled.digest() == reference.digest()
    assert evidence.expected_of("../hello_2.10-3_amd64.buildinfo") == ("Build-Date",)
    assert evidence.expected_of("../hello_2.10-3_amd64.changes") == (BUILDINFO_CHECKSUMS,)
    # a .buildinfo naming another .deb is not settled, and its .changes (naming that .buildinfo) neither
    unsettled = evidence.settled(_manifest(buildinfo="b3", changes="c2", deb="d2"), reference)
    assert unsettled.differing(reference) == ["../h.deb", "../hello_2.10-3_amd64.buildinfo",
                                              "../hello_2.10-3_amd64.changes"]


def test_a_variant_not_kept_is_settled_only_when_every_judged_variant_of_its_path_was(tmp_path):
    evidence = _evidence(tmp_path, {"b2": buildinfo("Thu, 03 Dec 2026 00:00:00 +0000")})
    reference = _manifest(buildinfo=B1)
    assert evidence.settled(_manifest(buildinfo="gone"), reference).differing(reference) == ["../hello_2.10-3_amd64.buildinfo"]
    evidence.settled(_manifest(buildinfo="b2"), reference)
    assert evidence.settled(_manifest(buildinfo="gone"), reference).differing(reference) == []


def test_the_packages_say_in_one_line_what_was_set_aside():
    packages = [PackageFile("../hello_2.10-3_amd64.buildinfo", 5123, "ab" * 32, 4, 4, ["Build-Date"]),
                PackageFile("../hello_2.10-3_amd64.changes", 1800, "cd" * 32, 4, 4, [BUILDINFO_CHECKSUMS]),
                PackageFile("../h.deb", 53172, "ef" * 32, 1, 4), PackageFile("../h-dbgsym.deb", 9000, "12" * 32, 1, 4)]
    assert set_aside_line(packages) == (
        "the 2 .deb files are identical in all 4 runs; ../hello_2.10-3_amd64.buildinfo differs only in Build-Date, as it always does; "
        "../hello_2.10-3_amd64.changes differs only in the .buildinfo's checksums, as it always does")
    assert "4 variants in 4 runs: only Build-Date, as in every build" in packages_line(packages)
    assert set_aside_line(packages[2:]) == ""
