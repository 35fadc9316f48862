"""Rows <-> models: how hunks, op-log entries and effects are laid out in the tables."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..domain.effect_outcome import Action, EffectEdit, State
from ..domain.hunks import Context, Lines
from ..domain.model import KIND_BY_VALUE, Hunk, lines_of
from ..domain.shapes import JSON
from ..domain.status import BY_VALUE
from ..domain.text import split_lines
from .link import Params as Params
from .link import Raw
from .link import Row as Row
from .roots import AsUri
from .statements import Statements

_S = TypeVar("_S", str, str | None)

HUNK_COLUMNS = (
    "id, proposal_id, task_id, seq, uri, kind, new_uri, status, line, old_text, new_text, "
    "ctx_before, ctx_after, applied_text, message, feedback, version, decided_at, lsn, in_file, problem, kept, parts, by_commit"
)
TASK_COLUMNS = "id, title, goal, agent, status, summary, created_at, updated_at, lsn"
CAPTURE_COLUMNS = "id, lsn, state, restores, cleanup, outcome"


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


class Shared:
    """What rows read from the store can share instead of each holding its own copy.

    `known` are the hunks this process already holds (by id): a hunk's proposal, kind and
    texts are set when it is proposed and never updated, so a row read again (after every
    decision, by every sync) takes them from there instead of parsing them again; so is its
    context while the row's is the one it was read from (`Hunk.ctx_key`: Stet takes a
    hunk's context again when it writes next to it). `strings` makes equal strings of the
    rows read one object: a file's uri, a proposal id, a blank context line are kept once,
    not once per hunk."""

    def __init__(self, known: Mapping[str, Hunk] | None = None):
        self.known: Mapping[str, Hunk] = known if known is not None else {}
        self._strings: dict[str | None, str | None] = {None: None}
        self._contexts: dict[str, Context] = {}

    def one(self, s: _S) -> _S:
        return self._strings.setdefault(s, s)  # type: ignore[return-value]

    def lines(self, text: str | None) -> Lines:
        return tuple(map(self.one, split_lines(text))) if text else ()

    def context(self, data: str) -> Context:
        ctx = self._contexts.get(data)
        if ctx is None:
            ctx = self._contexts[data] = tuple(map(self.one, json.loads(data)))
        return ctx


def hunk_from_row(r: Any, shared: Shared | None = None) -> Hunk:
    shared = shared or Shared()
    one = shared.one
    k = shared.known.get(r[0])
    if k is not None:
        proposal_id, kind, old, new = k.proposal_id, k.kind, k.old, k.new
        uri = k.uri if k.uri == r[4] else one(r[4])
        message = k.message if r[14] is None else r[14]  # the proposal's, which never changes
    else:
        proposal_id, kind, uri = one(r[1]), KIND_BY_VALUE[r[5]], one(r[4])
        old, new = shared.lines(r[9]), shared.lines(r[10])
        message = r[14]
    ctx_key = hash((r[11], r[12]))
    if k is not None and k.ctx_key == ctx_key:
        ctx_before, ctx_after = k.ctx_before, k.ctx_after
    else:
        ctx_before, ctx_after = shared.context(r[11]), shared.context(r[12])
    return Hunk(
        id=r[0],
        proposal_id=proposal_id,
        task_id=one(r[2]),
        seq=r[3],
        uri=uri,
        kind=kind,
        new_uri=r[6],
        status=BY_VALUE[r[7]],
        line=r[8],
        old=old,
        new=new,
        ctx_before=ctx_before,
        ctx_after=ctx_after,
        applied_text=None if r[13] is None else lines_of(r[13]),
        message=message,
        feedback=r[15],
        version=r[16],
        decided_at=r[17],
        lsn=r[18],
        in_file=None if r[19] is None else bool(r[19]),
        problem=r[20],
        kept=bool(r[21]),
        parts=None if r[22] is None else tuple(json.loads(r[22])),
        by_commit=r[23],
        ctx_key=ctx_key,
    )


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


# proposal id -> (its message, its turn): what its hunks share, never changed once stored
ProposalInfo = tuple[str | None, tuple[str, int] | None]


def with_messages(raw: Raw, sql: Statements, hunks: list[Hunk], cache: dict[str, ProposalInfo]) -> None:
    """Give each hunk its proposal's message and turn: one string per proposal, shared by its
    hunks (stored once, in `proposals` and `turns`; hunks stored before that keep their own
    copy of the message)."""
    missing = sorted({h.proposal_id for h in hunks if h.proposal_id not in cache})
    for i in range(0, len(missing), 500):
        chunk = missing[i : i + 500]
        for pid, message, session, number in raw.execute(sql.messages.format(marks=sql.marks(len(chunk))), chunk):
            cache[pid] = (message, None if session is None else (session, int(number)))
    for h in hunks:
        info = cache.get(h.proposal_id)
        if info is not None:
            if h.message is None:
                h.message = info[0]
            h.turn = info[1]


def hunk_rows(raw: Raw, sql: Statements, ids: list[str]) -> list[Row]:
    rows = []
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        rows += raw.execute(sql.hunks_by_ids.format(marks=sql.marks(len(chunk))), chunk).fetchall()
    return rows
