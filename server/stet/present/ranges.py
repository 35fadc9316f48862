"""Where a hunk is, as LSP counts it: lines and UTF-16 columns (docs/protocol.md, HunkState.range)."""

from __future__ import annotations

from ..domain.text import is_terminated, utf16_len

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..domain.model import Hunk
    from ..domain.shapes import Range


def hunk_range(h: Hunk) -> Range:
    """The range of the text the document shows for `h` (its new text once applied)."""
    text = h.anchored_text()
    start = {"line": h.line, "character": 0}
    if text and not is_terminated(text[-1]):
        end = {"line": h.line + len(text) - 1, "character": utf16_len(text[-1])}
    else:
        end = {"line": h.line + len(text), "character": 0}
    return {"start": start, "end": end}
