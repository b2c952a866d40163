"""Text bound for a terminal, made safe: file names, commands and build output come from
the build under test, and a name with a newline would forge report lines, one with an
escape sequence (OSC, CSI) would drive the user's terminal.

Every character `str.isprintable()` rejects — C0 and C1 controls (newline, ESC), DEL,
bidi and zero-width format characters, line separators, lone surrogates — is shown as
its Python escape (`\\n`, `\\x1b`, `\\u202e`); a byte that was not UTF-8 (decoded with
surrogateescape, as file names are) as `\\xNN`.
"""

from __future__ import annotations

SURROGATE_ESCAPES = range(0xDC80, 0xDD00)  # where surrogateescape puts undecodable bytes


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


def _escaped(text: str, keep: str) -> str:
    if text.isprintable():
        return text  # the common case, at C speed
    return "".join(char if char.isprintable() or char in keep else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code in SURROGATE_ESCAPES:
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")
