"""The fast paths of line splitting and line-break normalisation agree with the reference
definitions (LSP breaks lines at \\r\\n, \\r and \\n only)."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.text import normalize_eol, split_lines

_BREAK = re.compile(r"\r\n|\r|\n")
CHARS = st.sampled_from(["a", "é", "😀", "\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029", " "])
TEXT = st.lists(CHARS, max_size=40).map("".join)


def _reference_split(text: str) -> list[str]:
    lines, pos = [], 0
    for m in _BREAK.finditer(text):
        lines.append(text[pos : m.end()])
        pos = m.end()
    if pos < len(text):
        lines.append(text[pos:])
    return lines


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_split_lines_breaks_only_where_lsp_does(text):
    assert split_lines(text) == _reference_split(text)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(["\n", "\r\n", "\r"]))
def test_normalize_eol_rewrites_every_break(text, eol):
    assert normalize_eol(text, eol) == _BREAK.sub(eol, text)
