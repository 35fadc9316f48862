"""Names for the plain-JSON shapes the domain passes around."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]  # an object as JSON has it (a HunkState, a context, a journal entry)
Position = dict[str, int]  # {"line": int, "character": int}: 0-based, UTF-16 columns
Range = dict[str, Position]  # {"start": Position, "end": Position}
TextEdit = tuple[Range, str]  # (range, new text)
