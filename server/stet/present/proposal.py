"""What a proposal or a capture made (domain/proposed.py), as the doors send it:
`{proposalId, hunks, alreadyProposed, rejectedBefore}` of HunkStates (and `notes` when a patch
left some aside); a capture adds `restored` and `left`, and, once its baseline was chosen,
`baseline`, `refused` (`[{path, why}]`) and `keep`. What a snapshot (a capture's baseline)
recorded: `{taskId, whole, files, new, notes}`."""

from __future__ import annotations

from . import hunk_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..domain.capture import Snapped
    from ..domain.proposed import Captured, Proposed
    from ..domain.shapes import JSON


def proposed(p: Proposed) -> JSON:
    out: JSON = {
        "proposalId": p.proposal_id,
        "hunks": hunk_json.states(p.hunks),
        "alreadyProposed": hunk_json.states(p.already_proposed),
        "rejectedBefore": hunk_json.states(p.rejected_before),
    }
    if p.notes:
        out["notes"] = list(p.notes)
    return out


def captured(c: Captured) -> JSON:
    out = {**proposed(c.proposed), "restored": list(c.restored), "left": list(c.left)}
    if c.baseline is not None:
        out["baseline"] = c.baseline
        out["refused"] = [{"path": r.path, "why": r.why} for r in c.refused]
        out["keep"] = c.keep
    return out


def snapped(s: Snapped) -> JSON:
    return {"taskId": s.task_id, "whole": s.whole, "files": s.files, "new": s.new, "notes": list(s.notes)}
