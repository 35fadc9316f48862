"""Who decided a hunk and who proposed it, in the words people read: `stet status`, `stet show`
and the language server's hover say them as the editor's view does ("accepted by commit abc1234",
"sent back to the agent"), with the agent's name as a HunkState's `agent` gives it, made inert."""

from __future__ import annotations

from ..domain.inert import inert
from ..domain.status import Status
from .hunk_json import agent_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..domain.model import Hunk

_HEX = frozenset("0123456789abcdef")


def decided_by(h: Hunk) -> str | None:
    """ "accepted by commit abc1234" for a hunk a commit decided (its id shortened; an id that is
    not git's hex is not shown), else None."""
    if h.by_commit is None or h.status not in (Status.ACCEPTED, Status.APPLIED):
        return None
    sha = h.by_commit
    if 7 <= len(sha) <= 64 and set(sha) <= _HEX:
        return f"accepted by commit {sha[:7]}"
    return "accepted by a commit"


def decided_apart(h: Hunk) -> bool:
    """Decided by someone other than the developer alone: accepted by a commit, or a rejection
    sent back to the agent (the hover tells it even once decided)."""
    return decided_by(h) is not None or h.is_sent_back


def words(h: Hunk) -> list[str]:
    """What a person is told of who decided and who proposed `h`, most telling first."""
    out = []
    by = decided_by(h)
    if by is not None:
        out.append(by)
    if h.is_sent_back:
        out.append("sent back to the agent")
    if h.agent is not None:
        out.append(f"proposed by {inert(agent_name(h.agent))}")
    return out
