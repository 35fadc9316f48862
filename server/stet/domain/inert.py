"""Text someone else wrote, made inert for a terminal.

Agents write proposal ids, messages, task titles, notes, a hunk's new text, file names; a
developer reads them in Stet's human-readable output. Printed raw, an escape sequence in them
drives the terminal: it erases or moves over lines (a pending hunk hidden), rings the bell,
sets the clipboard (OSC 52), and a bidi override (U+202E) shows text in another order than it
is. Here every such character is shown as an escape instead (`\\x1b`, `\\u202e`): C0 and C1
controls and DEL (category Cc), invisible format characters (Cf: bidi embeddings, overrides
and isolates, marks, zero-width characters, tags), line and paragraph separators (Zl, Zp) and
lone surrogates (Cs: bytes of a name that were not UTF-8). Newlines too, so one field cannot
forge another row; text of several lines is made inert one line at a time by its caller, each
line on a row of its own. Backslashes are left as they are: a message that already holds the
characters `\\x1b` reads the same as one that held the escape, and neither does anything.

Pure: the CLI, `stet resume` and `stet doctor` print through it; JSON output stays exact.
"""

from __future__ import annotations

NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
UNSAFE_CATEGORIES = ("Cc", "Cf", "Zl", "Zp", "Cs")


def unsafe(c: str) -> bool:
    """Whether the character `c` would act on a terminal (or hide, or reorder text) printed raw."""
    if c.isprintable():  # letters, digits, marks, symbols, spaces: never a control
        return False
    import unicodedata  # only for text that holds something unprintable

    return unicodedata.category(c) in UNSAFE_CATEGORIES


def escape(c: str) -> str:
    """`c` as a C or Python escape: \\n, \\x1b, \\u202e, \\U000e0041; a surrogate escape of a
    byte that was not UTF-8 (U+DC80..U+DCFF) as that byte, \\xNN."""
    if c in NAMED:
        return NAMED[c]
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:
        n -= 0xDC00
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def inert(text: str, keep: str = "") -> str:
    """`text` with every unsafe character but those in `keep` (a tab in a line of code) shown as
    its escape: safe to print, on one line unless `keep` holds a newline."""
    if text.isprintable():  # nearly always: nothing to do
        return text
    return "".join(escape(c) if c not in keep and unsafe(c) else c for c in text)


QUOTED = {**NAMED, '"': '\\"', "\\": "\\\\"}


def shown(name: str) -> str:
    """A file name on one line of output: as it is, or, when it holds an unsafe character,
    quoted with C escapes as git shows it (a quote and a backslash escaped too, so that the
    quoted name is unambiguous)."""
    if name.isprintable() or not any(unsafe(c) for c in name):
        return name
    return '"' + "".join(QUOTED.get(c) or (escape(c) if unsafe(c) else c) for c in name) + '"'
