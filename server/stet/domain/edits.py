"""Applying LSP TextEdits (ranges in UTF-16 columns) to a text."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

from .shapes import Position, TextEdit
from .text import line_body, normalize_eol, split_lines, utf16_to_index


class OverlappingEdits(ValueError):
    pass


def apply_text_edits(base: str, edits: Sequence[TextEdit], eol: str | None = None) -> str:
    """The text after `edits` ((range, newText) pairs, all relative to `base`, as LSP says).

    Positions past a line's end or the document's end are clamped, as LSP asks. When `eol`
    is given, line breaks in the new text are written as `eol`, as editors do.
    """
    lines = split_lines(base)
    starts = list(accumulate(map(len, lines), initial=0))

    def offset(pos: Position) -> int:
        line, char = pos["line"], pos["character"]
        if line < 0:
            return 0
        if line >= len(lines):
            return len(base)
        return int(starts[line] + utf16_to_index(line_body(lines[line]), max(0, char)))

    spans = []
    for order, (rng, text) in enumerate(edits):
        a, b = offset(rng["start"]), offset(rng["end"])
        if b < a:
            raise OverlappingEdits(f"edit {order} ends before it starts")
        spans.append((a, b, order, normalize_eol(text, eol) if eol else text))
    spans.sort(key=lambda s: (s[0], s[1], s[2]))
    out = []
    pos = 0
    for a, b, order, text in spans:
        if a < pos:
            raise OverlappingEdits(f"edit {order} overlaps another edit")
        out.append(base[pos:a])
        out.append(text)
        pos = b
    out.append(base[pos:])
    return "".join(out)
