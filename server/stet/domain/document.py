"""An open editor buffer: its lines and version, changed by LSP content changes."""

from __future__ import annotations

from .anchor import LineEdit
from .shapes import Range
from .text import is_terminated, line_body, split_lines, utf16_len, utf16_to_index


class Document:
    def __init__(self, uri: str, text: str, version: int | None):
        self.uri = uri
        self.version = version
        self.lines = split_lines(text)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def index(self, line: int, character: int) -> tuple[int, int]:
        """(line, str index) of an LSP position, clamped to the document as LSP asks."""
        n = len(self.lines)
        line = max(0, line)
        if line >= n:
            if n and not is_terminated(self.lines[-1]):
                return n - 1, len(line_body(self.lines[-1]))
            return n, 0
        body = line_body(self.lines[line])
        return line, utf16_to_index(body, max(0, character))

    def offset(self, line: int, character: int) -> int:
        """Character offset in `text` of an LSP position (used to apply TextEdits)."""
        li, ci = self.index(line, character)
        return sum(len(x) for x in self.lines[:li]) + ci

    def apply_change(self, rng: Range | None, text: str) -> LineEdit | None:
        """Apply one content change; the LineEdit that moves anchors, None for a full replace."""
        if rng is None:
            self.lines = split_lines(text)
            return None
        s = rng["start"]
        e = rng["end"]
        sl, sc = self.index(s["line"], s["character"])
        el, ec = self.index(e["line"], e["character"])
        if (el, ec) < (sl, sc):
            sl, sc, el, ec = el, ec, sl, sc
        lines = self.lines
        n = len(lines)
        prefix = lines[sl][:sc] if sl < n else ""
        suffix = lines[el][ec:] if el < n else ""
        segment = prefix + text + suffix
        lo, hi = sl, min(el + 1, n)
        # "\r" then "\n" across the edges of the change form one line break.
        joined = False
        if lo > 0 and segment.startswith("\n") and lines[lo - 1].endswith("\r"):
            lo -= 1
            segment = lines[lo] + segment
            joined = True
        if segment.endswith("\r") and hi < n and lines[hi].startswith("\n"):
            segment += lines[hi]
            hi += 1
            joined = True
        lines[lo:hi] = split_lines(segment)
        if joined:
            return None  # rare: line numbering shifted in a way a LineEdit cannot say
        pieces = split_lines(text)
        breaks = sum(1 for p in pieces if is_terminated(p))
        return LineEdit(
            start_line=sl,
            start_col0=sc == 0,
            end_line=el,
            end_col0=ec == 0,
            breaks=breaks,
            ends_with_break=bool(pieces) and is_terminated(pieces[-1]),
            empty=not text,
        )

    def end(self) -> tuple[int, int]:
        if not self.lines:
            return 0, 0
        if is_terminated(self.lines[-1]):
            return len(self.lines), 0
        return len(self.lines) - 1, utf16_len(self.lines[-1])
