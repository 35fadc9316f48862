"""A hunk as every door sends it: the HunkState of docs/protocol.md. The editor (`stet/listHunks`,
`stet/hunksChanged`), MCP's tools and `stet ... --json` all take it from here, so a field added
here reaches each of them; no other module names a HunkState's keys (tests/unit/test_present.py)."""

from __future__ import annotations

from ..domain.model import inline_message
from .ranges import hunk_range

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..domain.model import Hunk
    from ..domain.shapes import JSON

# An agent's name as a HunkState carries it, at most (it is the agent's own text, sent with
# every hunk at each change).
AGENT_INLINE = 256


def agent_name(name: str) -> str:
    return name if len(name) <= AGENT_INLINE else name[: AGENT_INLINE - 1] + "…"


def state(h: Hunk) -> JSON:
    """The HunkState. (Sent for every hunk of a file at each change: plain attribute reads,
    `_value_` rather than the slower Enum `value` property.)"""
    applied = h.applied_text
    message, cut = inline_message(h.message)
    out: JSON = {
        "id": h.id,
        "proposalId": h.proposal_id,
        "taskId": h.task_id,
        "uri": h.uri,
        "kind": h.kind._value_,
        "status": h.status._value_,
        "range": hunk_range(h),
        "oldText": "".join(h.old),
        "newText": "".join(h.new),
        "newUri": h.new_uri,
        "message": message,
        "feedback": h.feedback,
        "version": h.version,
        "decidedAt": h.decided_at,
        "inFile": h.in_file_state(),
    }
    if applied is not None:
        out["appliedText"] = "".join(applied)
    if h.problem is not None:
        out["problem"] = h.problem
    if cut:
        out["messageTruncated"] = True
    if h.kept:
        out["kept"] = True
    if h.by_commit is not None:
        out["decidedBy"], out["commit"] = "commit", h.by_commit
    if h.is_sent_back:
        out["sentBack"] = True
    if h.agent is not None:
        out["agent"] = agent_name(h.agent)
    if h.parts is not None:
        out["parts"] = list(h.parts)
    if h.turn is not None:
        out["turn"] = {"session": h.turn[0], "number": h.turn[1]}
    return out


def states(hunks: Iterable[Hunk]) -> list[JSON]:
    return [state(h) for h in hunks]


def located(h: Hunk, rel: Callable[[str], str]) -> JSON:
    """The HunkState with where a person finds it: `path` (`rel` of its uri) and `line` (1-based)."""
    return {**state(h), "path": rel(h.uri), "line": h.line + 1}


def decided(h: Hunk, rel: Callable[[str], str]) -> JSON:
    """A hunk's decision in short (MCP's `wait_for_decisions`): where it is, its status, the
    developer's feedback and, when given, their own text."""
    out: JSON = {"id": h.id, "path": rel(h.uri), "line": h.line + 1, "status": h.status.value, "feedback": h.feedback}
    if h.applied_text is not None:
        out["appliedText"] = "".join(h.applied_text)
    return out
