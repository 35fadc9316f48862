"""A hunk's row <-> the domain's Hunk, apart from the other tables' rows (rows.py): `stet status`
reads hunks with no event loop (store/glance.py, review/glance.py) and loads this module, light
(json and the domain model), not rows.py's."""

from __future__ import annotations

import json

from ..domain.model import KIND_BY_VALUE, Hunk, lines_of
from ..domain.status import BY_VALUE
from ..domain.text import split_lines

# A context as Stet wrote it (json.dumps: no white space around it) read without json.loads' checks.
_decode = json.JSONDecoder().raw_decode

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeVar

    from ..domain.hunks import Context, Lines

    _S = TypeVar("_S", str, str | None)

HUNK_COLUMNS = (
    "id, proposal_id, task_id, seq, uri, kind, new_uri, status, line, old_text, new_text, "
    "ctx_before, ctx_after, applied_text, message, feedback, version, decided_at, lsn, in_file, problem, kept, parts, by_commit, sent_back"
)


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
            ctx = self._contexts[data] = tuple(map(self.one, _decode(data)[0]))
        return ctx


class Once(Shared):
    """For rows a process reads once and then exits (a glance): nothing to share over time, so
    nothing is looked up to be kept once (a status of 200 hunks: about a millisecond less)."""

    def one(self, s: _S) -> _S:
        return s

    def lines(self, text: str | None) -> Lines:
        return tuple(split_lines(text)) if text else ()

    def context(self, data: str) -> Context:
        return tuple(_decode(data)[0])


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
        sent_back=r[24],
        ctx_key=ctx_key,
    )
