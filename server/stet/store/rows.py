"""Rows <-> models: how hunks, op-log entries and effects are laid out in the tables (a hunk's row
is read in hunk_layout.py, which a glance loads alone)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ..domain.effect_outcome import Action, EffectEdit, State
from ..domain.model import Hunk
from ..domain.shapes import JSON
from .hunk_layout import HUNK_COLUMNS as HUNK_COLUMNS
from .hunk_layout import Shared as Shared
from .hunk_layout import hunk_from_row as hunk_from_row
from .link import Params as Params
from .link import Raw
from .link import Row as Row
from .roots import AsUri
from .statements import Statements

TASK_COLUMNS = "id, title, goal, agent, status, summary, created_at, updated_at, lsn"
CAPTURE_COLUMNS = "id, lsn, state, restores, cleanup, outcome"


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def hunk_values(h: Hunk) -> Row:
    return (
        h.id,
        h.proposal_id,
        h.task_id,
        h.seq,
        AsUri(h.uri),
        h.kind.value,
        AsUri(h.new_uri),
        h.status.value,
        h.line,
        h.old_text,
        h.new_text,
        json.dumps(h.ctx_before),
        json.dumps(h.ctx_after),
        None if h.applied_text is None else "".join(h.applied_text),
        None,  # the message is the proposal's, stored once there (see `with_messages`)
        h.feedback,
        h.version,
        h.decided_at,
        h.lsn,
        None if h.in_file is None else int(h.in_file),
        h.problem,
        int(h.kept),
        None if h.parts is None else json.dumps(list(h.parts)),
        h.by_commit,
        h.sent_back,
    )


@dataclass(kw_only=True)
class OpRow:
    lsn: int
    op_id: str
    kind: str
    args: JSON
    result: Any
    at: str


@dataclass(kw_only=True)
class EffectRow:
    id: int
    lsn: int
    uri: str
    action: Action
    edits: list[EffectEdit]
    state: State
    attempts: int
    target: str = "file"  # where it was meant to land when decided: an open "buffer" or the "file"
    owner: str | None = None  # the process whose editor buffer holds it (see process.py)


def op_row(r: Any) -> OpRow:
    return OpRow(
        lsn=r[0], op_id=r[1], kind=r[2], args=json.loads(r[3]), result=json.loads(r[4]) if r[4] else None, at=r[5]
    )


def effect_row(r: Any) -> EffectRow:
    return EffectRow(
        id=r[0],
        lsn=r[1],
        uri=r[2],
        action=Action(r[3]),
        edits=json.loads(r[4]),
        state=State(r[5]),
        attempts=r[6],
        target=r[7],
        owner=r[8],
    )


# proposal id -> (its message, its turn, its agent): what its hunks share, never changed once stored
ProposalInfo = tuple[str | None, tuple[str, int] | None, str | None]


def with_messages(raw: Raw, sql: Statements, hunks: list[Hunk], cache: dict[str, ProposalInfo]) -> None:
    """Give each hunk its proposal's message, turn and agent (the proposal's, else its task's):
    one string per proposal, shared by its hunks (stored once, in `proposals`, `turns` and
    `tasks`; hunks stored before that keep their own copy of the message)."""
    missing = sorted({h.proposal_id for h in hunks if h.proposal_id not in cache})
    for i in range(0, len(missing), 500):
        chunk = missing[i : i + 500]
        for pid, message, session, number, agent in raw.execute(
            sql.messages.format(marks=sql.marks(len(chunk))), chunk
        ):
            cache[pid] = (message, None if session is None else (session, int(number)), agent)
    for h in hunks:
        info = cache.get(h.proposal_id)
        if info is not None:
            if h.message is None:
                h.message = info[0]
            h.turn, h.agent = info[1], info[2]


def hunk_rows(raw: Raw, sql: Statements, ids: list[str]) -> list[Row]:
    rows = []
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        rows += raw.execute(sql.hunks_by_ids.format(marks=sql.marks(len(chunk))), chunk).fetchall()
    return rows
