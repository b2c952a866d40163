"""ELF objects, libraries and executables (pyelftools reads the headers): which sections
differ, whether the code sections are identical, what happened to the symbols (renamed,
renumbered, reordered), and the GNU build-id, which can be identical while the file is not
(the seed case: only `.symtab`/`.strtab` differed)."""

from __future__ import annotations

import re
from collections import Counter
from typing import BinaryIO

from elftools.elf.sections import Section, SymbolTableSection

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from fuzzer.compare.inside import CHUNK, Context, Inside, listed

NAME = "elf"
CONTAINER = False
SYMBOL_TABLES = (".symtab", ".dynsym")
DIGITS = re.compile(r"\d+")
Shape = tuple[int, int, str, str, int | str]  # a symbol's value, size, type, binding, section index


def sniff(name: str, head: bytes) -> bool:
    return head.startswith(b"\x7fELF")


def compare(a: BinaryIO, b: BinaryIO, ctx: Context) -> Inside:
    elf_a, elf_b = ELFFile(a), ELFFile(b)
    sections_a, sections_b = _sections(elf_a), _sections(elf_b)
    differing = [n for n in sections_a if n in sections_b and not _same_data(sections_a[n], sections_b[n], a, b)]
    only = [f"{n} only in the first" for n in sections_a if n not in sections_b] + \
           [f"{n} only in the second" for n in sections_b if n not in sections_a]
    code = [n for n in sections_a if sections_a[n]["sh_flags"] & SH_FLAGS.SHF_EXECINSTR]
    details = [_symbols(elf_a, elf_b, table) for table in SYMBOL_TABLES if table in differing]
    parts = [f"sections differ: {listed(differing + only)}" if differing or only else "no section differs (headers do)"]
    parts += [d for d in details if d]
    code_differing = [n for n in code if n in differing or n not in sections_b]
    parts.append(f"code sections differ: {listed(code_differing)}" if code_differing else "code sections identical")
    parts.append(_build_id(elf_a, elf_b))
    # sections are not members: the ELF file itself is the differing member of an archive
    return Inside(NAME, "; ".join(parts))


def _sections(elf: ELFFile) -> dict[str, Section]:
    """Name → section; a name used twice (e.g. several `.group`) is numbered to stay unique."""
    seen: Counter[str] = Counter()
    found = {}
    for section in elf.iter_sections():
        name = section.name or f"[{section.header['sh_type']}]"
        found[name if not seen[name] else f"{name}#{seen[name]}"] = section
        seen[name] += 1
    return found


def _same_data(x: Section, y: Section, a: BinaryIO, b: BinaryIO) -> bool:
    """Section contents compared in chunks straight from the files: each byte is read once."""
    if x["sh_type"] != y["sh_type"] or x["sh_flags"] != y["sh_flags"]:
        return False
    if x["sh_type"] == "SHT_NOBITS":
        return bool(x["sh_size"] == y["sh_size"])
    if x["sh_size"] != y["sh_size"]:
        return False
    left, offsets = x["sh_size"], [x["sh_offset"], y["sh_offset"]]
    while left > 0:
        n = min(CHUNK, left)
        a.seek(offsets[0]), b.seek(offsets[1])
        if a.read(n) != b.read(n):
            return False
        offsets, left = [offsets[0] + n, offsets[1] + n], left - n
    return True


def _symbols(elf_a: ELFFile, elf_b: ELFFile, table: str) -> str:
    """Symbols matched by what they are (address, size, type, binding, section) rather than
    by name: a symbol whose name alone changed was renamed; renamed to the same name but
    for its digits (`__local13` → `__local7`), renumbered."""
    syms_a, syms_b = _table(elf_a, table), _table(elf_b, table)
    left_a, left_b = Counter(syms_a) - Counter(syms_b), Counter(syms_b) - Counter(syms_a)
    by_shape: dict[Shape, list[str]] = {}
    for (name, shape), n in left_b.items():
        by_shape.setdefault(shape, []).extend([name] * n)
    renumbered: Counter[str] = Counter()
    renamed: Counter[str] = Counter()
    unmatched = 0
    for (name, shape), n in left_a.items():
        for _ in range(n):
            candidates = by_shape.get(shape, [])
            pattern = DIGITS.sub("#", name)
            twin = next((c for c in candidates if DIGITS.sub("#", c) == pattern), None)
            if twin is not None or candidates:
                candidates.remove(twin if twin is not None else candidates[0])
                (renumbered if twin is not None else renamed)[shape[3]] += 1
            else:
                unmatched += 1
    unmatched += sum(len(names) for names in by_shape.values())
    parts = [_count(renumbered, "renumbered"), _count(renamed, "renamed")]
    if unmatched:
        parts.append(f"{unmatched} symbol{'s' if unmatched != 1 else ''} added, removed or moved")
    if not left_a and not left_b and syms_a != syms_b:
        parts.append(f"{sum(x != y for x, y in zip(syms_a, syms_b))} symbols reordered")
    found = "; ".join(p for p in parts if p)
    return f"{table}: {found}" if found else f"{table}: same symbols ({len(syms_a)}), different bytes"


def _table(elf: ELFFile, table: str) -> list[tuple[str, Shape]]:
    section = elf.get_section_by_name(table)
    if not isinstance(section, SymbolTableSection):  # absent (None), or a table pyelftools cannot read
        return []
    return [(s.name, (s["st_value"], s["st_size"], s["st_info"]["type"], s["st_info"]["bind"], s["st_shndx"]))
            for s in section.iter_symbols()]


def _count(by_binding: Counter[str], what: str) -> str:
    if not by_binding:
        return ""
    words = {"STB_LOCAL": "local", "STB_GLOBAL": "global", "STB_WEAK": "weak"}
    return ", ".join(f"{n} {words.get(bind, bind)} symbol{'s' if n != 1 else ''} {what}"
                     for bind, n in sorted(by_binding.items()))


def _build_id(elf_a: ELFFile, elf_b: ELFFile) -> str:
    first, second = _gnu_build_id(elf_a), _gnu_build_id(elf_b)
    if first is None and second is None:
        return "no GNU build-id"
    if first is not None and first == second:
        return f"build-id identical ({first[:16]}…) although the files differ"
    return f"build-id differs ({first or 'none'} vs {second or 'none'})"


def _gnu_build_id(elf: ELFFile) -> str | None:
    section = elf.get_section_by_name(".note.gnu.build-id")
    if section is None or not hasattr(section, "iter_notes"):
        return None
    return next((n["n_desc"] for n in section.iter_notes() if n["n_type"] == "NT_GNU_BUILD_ID"), None)
