"""What a recovery found (domain/recovered.py), as the editor is told it: `stet/restored`,
`{files, counts, durationMs}` (docs/protocol.md)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..domain.recovered import Recovered
    from ..domain.shapes import JSON


def restored(r: Recovered) -> JSON:
    return {"files": r.files, "counts": r.counts, "durationMs": r.duration_ms}
