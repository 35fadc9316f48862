"""What a decision did (domain/decided.py), as the doors send it: the HunkStates of the hunks
decided and `notTaken`, `[{hunkId, status, why}]`, for those whose effect did not take."""

from __future__ import annotations

from . import hunk_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..domain.decided import Decided, NotTaken, Split
    from ..domain.shapes import JSON


def not_taken(missed: list[NotTaken]) -> list[JSON]:
    return [{"hunkId": m.hunk.id, "status": m.hunk.status._value_, "why": m.why} for m in missed]


def answer(decided: Decided) -> JSON:
    """`{hunks}`, plus `notTaken` when the effect did not take on some hunk (the editor's answer)."""
    missed = not_taken(decided.not_taken())
    states = hunk_json.states(decided.hunks)
    return {"hunks": states, "notTaken": missed} if missed else {"hunks": states}


def split(done: Split) -> JSON:
    """`{part, rest}`: each a HunkState or None."""
    return {
        "part": None if done.part is None else hunk_json.state(done.part),
        "rest": None if done.rest is None else hunk_json.state(done.rest),
    }
