"""Build strings made safe to show: file names, commands and build output come from the
build under test, and every format that shows them escapes them here, in one place.

- A terminal (`safe_name`, `safe_line`, `shown`): a name with a newline would forge
  report lines, one with an escape sequence (OSC, CSI) would drive the user's terminal.
  Every character `str.isprintable()` rejects — C0 and C1 controls (newline, ESC), DEL,
  bidi and zero-width format characters, line separators, lone surrogates — is shown as
  its Python escape (`\\n`, `\\x1b`, `\\u202e`); a byte that was not UTF-8 (decoded with
  surrogateescape, as file names are) as `\\xNN`.
- XML, HTML and Markdown (`visible`): characters XML 1.0 cannot carry at all, not even as
  character references, are shown as the same Python-style escapes instead of dropped.
- Markdown prose (`markdown_inline`): what Markdown would read as syntax is backslashed,
  `<>&` become entities; inside raw HTML in Markdown, where backslashes stay as they are,
  only the entities (`html_text`). HTML itself is escaped by its templates (Jinja2 autoescape).
- `one_line`: a command cut to one readable line (a recipe can be 5 KB of shell), also
  where evidence quotes one (`quoted_commands_cut`); the JSON report keeps the whole of it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

SURROGATE_ESCAPES = range(0xDC80, 0xDD00)  # where surrogateescape puts undecodable bytes
# build output (ANSI colours, NULs, undecodable file names as lone surrogates) is full of these
INVALID_XML = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# characters that mean something anywhere in a line: code spans, emphasis, links, strike,
# table cells (`(`, `!` and the like only matter after an already escaped `[` or `]`)
INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# ... and those that only mean something at the start of a line: headings, lists, rules
BLOCK_START = re.compile(r"^(\s*\d*)((?<=\d)[.)]|[#+\-=])")
COMMAND_CHARS = 160  # what a reader takes in at a glance: a compiler line with its flags
QUOTED = re.compile(r"`([^`]+)`")  # how evidence quotes a command


def safe_name(text: str) -> str:
    """A file name, command or path as one inert line."""
    return _escaped(text, keep="")


def safe_line(text: str) -> str:
    """One line of a report, which may quote file contents or a build's output: like
    `safe_name`, but tabs (common in diffs and logs, and harmless) stay as they are."""
    return _escaped(text, keep="\t")


def safe_lines(text: str) -> str:
    """Text of several lines (a message quoting a build's log): each made a safe line."""
    return "\n".join(map(safe_line, text.split("\n")))


def shown(value: object, limit: int = 100) -> str:
    """A value as safe to print on one terminal line: quoted, control characters and
    undecodable bytes escaped (no forged lines or escape sequences), long ones shortened."""
    text = str(value)
    if len(text) > limit:
        text = f"{text[:limit // 2]}...{text[-limit // 2:]} ({len(text)} characters)"
    return repr(text) if isinstance(value, (str, Path)) else text


def visible(text: str) -> str:
    """Show characters XML cannot carry as Python-style escapes instead of dropping them."""
    return INVALID_XML.sub(lambda m: ascii(m.group())[1:-1], text)


def markdown_inline(text: str) -> str:
    """Make a build string inert inline: HTML entities for <>&, backslashes for Markdown."""
    # a table row is one line; a newline in a cell would end the table
    text = html.escape(text, quote=False).replace("\r", " ").replace("\n", " ")
    text = INLINE_SPECIAL.sub(r"\\\1", text)
    return BLOCK_START.sub(r"\1\\\2", text)


def html_text(text: str) -> str:
    """Text inside raw HTML (a Markdown `<details>` summary): `<>&` and quotes as entities, nothing else."""
    return html.escape(text)


def one_line(command: str, limit: int = COMMAND_CHARS) -> str:
    """A command as one readable line: runs of white space (a recipe's newlines included)
    become one space, and what goes past `limit` is cut, saying how much was."""
    text = " ".join(command.split())
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()} … (+{len(text) - limit} characters)"


def quoted_commands_cut(text: str, limit: int = COMMAND_CHARS) -> str:
    """Evidence prose with each `quoted command` in it cut to one line (`one_line`)."""
    return QUOTED.sub(lambda m: f"`{one_line(m.group(1), limit)}`", text)


def is_long(command: str, limit: int = COMMAND_CHARS) -> bool:
    """Whether `one_line` would cut it: the HTML folds such a command behind its program."""
    return "\n" in command or len(command) > limit


def program(command: str) -> str:
    """The name of the program a command line runs (`/usr/bin/ld -o x ...` → `ld`)."""
    first = command.split(maxsplit=1)[0] if command.strip() else ""
    return first.rsplit("/", 1)[-1] or first


def _escaped(text: str, keep: str) -> str:
    if text.isprintable():
        return text  # the common case, at C speed
    return "".join(char if char.isprintable() or char in keep else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code in SURROGATE_ESCAPES:
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")
