"""Proposals: a WorkspaceEdit becomes hunks, stored in one transaction; replays are
answered from the store; a task's newer proposal supersedes its older overlapping hunks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

from ..domain.model import Hunk, Kind
from ..domain.proposal import BadProposal, Change, FileOp, Plan, TextChange, VersionMismatch, check_version
from ..domain.proposal import plan as plan_proposal
from ..domain.proposed import Proposed
from ..domain.shapes import JSON
from ..domain.status import Status
from ..domain.task import match_prior
from ..errors import Conflict, InvalidParams, TooLarge
from ..faults import fault
from ..store import Tx
from ..store.roots import Roots
from .config import new_id
from .memory import Memory
from .state import ReviewState


def _canonical(c: Change) -> list[object]:
    if isinstance(c, TextChange):
        return ["edit", c.uri, c.version, c.edits]
    return [c.kind, c.uri, c.new_uri, c.overwrite, c.ignore_if_exists, c.ignore_if_not_exists]


def _overlap(a: int, a_len: int, b: int, b_len: int) -> bool:
    """Do line spans [a, a+a_len) and [b, b+b_len) meet? An empty span is a point between lines."""
    if a_len == 0 and b_len == 0:
        return a == b
    if a_len == 0:
        return b < a < b + b_len or a == b
    if b_len == 0:
        return a < b < a + a_len or a == b
    return a < b + b_len and b < a + a_len


def _bytes(text: str | None) -> int:
    return 0 if text is None else len(text.encode("utf-8", "surrogatepass"))


def _stored_size(
    hunks: list[Hunk], pid: str, task_id: str | None, agent: str | None, message: str | None, files: Iterable[str]
) -> int:
    """What a proposal makes Stet store, in bytes: every hunk's texts and context, the message
    (once), the ids and the op log entry naming the files."""
    size = _bytes(message) + _bytes(agent) + 2 * (_bytes(pid) + _bytes(task_id)) + sum(_bytes(f) for f in files)
    for h in hunks:
        size += _bytes(h.old_text) + _bytes(h.new_text) + _bytes(h.uri) + _bytes(h.new_uri) + 64
        size += sum(_bytes(c) for c in (*h.ctx_before, *h.ctx_after))
    return size


def _sha(data: object, roots: Roots | None = None) -> str:
    """A content hash, its uris as the store keeps them (relative to `roots`: the same proposal
    sent again after the folder moved is the same); without `roots`, as a store of schema 8
    hashed them (absolute), which its proposals' hashes are matched against too."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256((text if roots is None else roots.doc_to_store(text)).encode()).hexdigest()


def _results(planned: Plan, roots: Roots | None = None) -> list[tuple[str, object]]:
    """The files a proposal leaves, in the order of their stored paths."""
    items = planned.results.items()
    if roots is None:
        return sorted(items, key=lambda kv: kv[0])
    return sorted(items, key=lambda kv: roots.to_store(kv[0]))


class _Same:
    """Whether a stored proposal is this one: its edit's hash (given by the caller, else of the
    changes) or the hash of the files it leaves, their paths as the store keeps them; a proposal
    stored before paths were (schema 8) was hashed with absolute paths, matched too."""

    def __init__(self, changes: list[Change], given: str | None, roots: Roots):
        self._canonical = [_canonical(c) for c in changes]
        self._derived = given is None
        self._roots = roots
        self.edit_hash = given or _sha(self._canonical, roots)

    def edit(self, stored: str) -> bool:
        return stored == self.edit_hash or (self._derived and stored == _sha(self._canonical))

    def result_hash(self, planned: Plan) -> str:
        return _sha(_results(planned, self._roots), self._roots)

    def result(self, stored: str, planned: Plan) -> bool:
        return stored in (self.result_hash(planned), _sha(_results(planned)))


async def record_hunks(
    tx: Tx, lsn: int, created: list[Hunk], superseded: list[Hunk], changed: Sequence[Hunk] = ()
) -> None:
    """Store a proposal's new hunks and the ones it supersedes (and other `changed` ones),
    all made by operation `lsn`."""
    for h in created:
        h.lsn = lsn
    await tx.add_hunks(created)
    for h in superseded:
        h.supersede(lsn)
    await tx.save_hunks([*superseded, *changed])


class Proposing:
    """propose and its helpers."""

    def __init__(self, state: ReviewState, memory: Memory):
        self.st = state
        self.memory = memory

    async def propose(
        self,
        proposal_id: str,
        changes: list[Change],
        task_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
        *,
        edit_hash: str | None = None,
        already_in: Iterable[str] = (),
    ) -> Proposed:
        """Turn an agent's edit into pending hunks; the same proposal again adds nothing.

        Within a task, a hunk identical to one the task already has pending, accepted or
        applied is not created again, nor one identical to a rejected one (reported with the
        developer's feedback). `edit_hash` identifies the proposal's content for replays when
        the caller derived `changes` from the files as they are (a re-sent diff then replays
        even after the files moved on); `already_in` names hunks of the task the caller found
        already applied in what the agent re-sent (reported, not created)."""
        st = self.st
        store = st.require_store()
        limits = st.limits
        self._check_asked(proposal_id, task_id, changes)
        changes = [self.normalized(c) for c in changes]  # refuses the whole proposal if any uri is outside
        same = _Same(changes, edit_hash, store.roots)
        edit_hash = same.edit_hash
        existing = await store.proposal(proposal_id)
        if existing is not None and same.edit(existing["edit_hash"]):
            return self.answer(proposal_id, await self._propose_result(proposal_id))
        async with st.op_lock:
            planned = await self._plan(changes)
            result_hash = same.result_hash(planned)
            new_hunks = [p.hunk(new_id("h"), proposal_id, seq, task_id, message) for seq, p in enumerate(planned.hunks)]
            if len(new_hunks) > limits.max_hunks:
                raise TooLarge(f"the proposal makes {len(new_hunks)} hunks; the limit is {limits.max_hunks}")
            stored = _stored_size(new_hunks, proposal_id, task_id, agent, message, planned.results)
            if stored > limits.max_bytes:
                raise TooLarge(
                    f"the proposal would make Stet store {stored} bytes (its hunks' old and new text and context, "
                    f"its message and ids); the limit is {limits.max_bytes}"
                )
            async with store.write() as tx:
                existing = await tx.proposal(proposal_id)
                if existing is not None:
                    if not same.edit(existing["edit_hash"]) and not same.result(existing["result_hash"], planned):
                        raise Conflict(f"proposal {proposal_id} already exists with a different edit")
                    op = await tx.op(f"propose/{proposal_id}")
                    result = op.result if op is not None else None
                else:
                    extra = {}
                    repeated_ids = list(dict.fromkeys(already_in))
                    if task_id is not None:
                        # A resumed agent re-sending what its task proposed before: the developer
                        # is not asked twice, and a change already rejected is reported, not re-asked.
                        prior = await tx.hunks_where(task_id=task_id)
                        new_hunks, repeated, rejected = match_prior(new_hunks, prior)
                        repeated_ids += [h.id for h in repeated if h.id not in repeated_ids]
                        if rejected:
                            extra["rejectedBefore"] = [h.id for h in rejected]
                    if repeated_ids:
                        extra["repeated"] = repeated_ids
                    replaced = await self.superseded_by(tx, new_hunks, task_id)
                    result = {"hunkIds": [h.id for h in new_hunks], "superseded": [h.id for h in replaced], **extra}
                    lsn = await tx.log(
                        f"propose/{proposal_id}",
                        "propose",
                        {
                            "proposalId": proposal_id,
                            "taskId": task_id,
                            "agent": agent,
                            "files": sorted(planned.results),
                        },
                        result,
                    )
                    await tx.add_proposal(proposal_id, task_id, agent, message, edit_hash, result_hash, lsn)
                    await record_hunks(tx, lsn, new_hunks, replaced)
                loaded = tx.hunks_since_at_commit(st.seen_lsn)
            fault("propose:after-commit")
            await self.memory.sync(loaded)
        return self.answer(proposal_id, result)

    def _check_asked(self, proposal_id: str, task_id: str | None, changes: list[Change]) -> None:
        limits = self.st.limits
        limits.check_id("proposalId", proposal_id)
        if task_id is not None:
            limits.check_id("taskId", task_id)
        size = sum(
            len(t.encode("utf-8", "surrogatepass")) for c in changes if isinstance(c, TextChange) for _, t in c.edits
        )
        if size > limits.max_bytes:
            raise TooLarge(f"the proposal carries {size} bytes of text; the limit is {limits.max_bytes}")

    async def _plan(self, changes: list[Change]) -> Plan:
        """The changes played over the files as they are now (open buffers at their version)."""
        st = self.st
        texts = await self._texts({u for c in changes for u in (c.uri, getattr(c, "new_uri", None)) if u})

        def load(uri: str, version: int | None) -> str | None:
            doc = st.doc(uri)
            check_version(uri, version, doc.version if doc else None)
            return texts[uri]

        try:
            return plan_proposal(changes, load)
        except BadProposal as exc:
            raise InvalidParams(str(exc)) from None
        except VersionMismatch as exc:
            raise Conflict(str(exc)) from None

    async def superseded_by(self, tx: Tx, new_hunks: list[Hunk], task_id: str | None) -> list[Hunk]:
        """Pending hunks of the same task whose old text a new hunk touches: the agent changed
        its mind about them. They are marked superseded, never merged with the new ones."""
        if task_id is None:
            return []
        older = await tx.hunks_where(task_id=task_id, statuses=[Status.PENDING])
        replaced = []
        for old in older:
            if old.kept:
                continue  # its text is in the file: only a capture of that file may replace it
            mem = self.st.hunks.get(old.id)
            # An editor's buffer is where this process knows better than the store; elsewhere a
            # row another process changed since this one last looked is the truth (read under the lock).
            known = mem is not None and (old.uri in self.st.open or mem.lsn >= old.lsn)
            line = mem.line if mem is not None and known else old.line
            for new in new_hunks:
                if new.uri != old.uri and not (new.kind == Kind.RENAME and old.uri == new.uri):
                    continue
                if (
                    old.kind != Kind.EDIT
                    or new.kind != Kind.EDIT
                    or _overlap(line, len(old.old), new.line, len(new.old))
                ):
                    replaced.append(old)
                    break
        return replaced

    async def _propose_result(self, proposal_id: str) -> JSON | None:
        op = await self.st.require_store().op(f"propose/{proposal_id}")
        return op.result if op is not None else None

    async def replay(self, proposal_id: str, edit_hash: str) -> Proposed | None:
        """The answer of a proposal already made with this content, else None."""
        existing = await self.st.require_store().proposal(proposal_id)
        if existing is None or existing["edit_hash"] != edit_hash:
            return None
        return self.answer(proposal_id, await self._propose_result(proposal_id))

    def answer(self, proposal_id: str, result: JSON | None = None) -> Proposed:
        """The proposal's hunks; with a task, also the earlier hunks of that task it repeated:
        `rejected_before` those the developer rejected (their feedback says why), including
        this proposal's own, and `already_proposed` the others, which were not created again."""
        all_hunks = self.st.hunks
        hunks = sorted((h for h in all_hunks.values() if h.proposal_id == proposal_id), key=lambda h: h.seq)
        result = result or {}
        earlier = [
            all_hunks[i] for i in (*result.get("repeated", ()), *result.get("rejectedBefore", ())) if i in all_hunks
        ]
        refused = [h for h in hunks if h.status == Status.REJECTED] + [
            h for h in earlier if h.status == Status.REJECTED
        ]
        return Proposed(
            proposal_id,
            tuple(hunks),
            tuple(h for h in earlier if h.status != Status.REJECTED),
            tuple(refused),
        )

    def normalized(self, c: Change) -> Change:
        uri_of = self.st.uri_of
        if isinstance(c, TextChange):
            return TextChange(uri_of(c.uri), c.version, c.edits)
        return FileOp(
            c.kind,
            uri_of(c.uri),
            uri_of(c.new_uri) if c.new_uri else None,
            c.overwrite,
            c.ignore_if_exists,
            c.ignore_if_not_exists,
        )

    async def _texts(self, uris: set[str]) -> dict[str, str | None]:
        """The current text of each uri: the open buffer, else the file (None: no such file)."""
        return {uri: await self.st.text_now(uri) for uri in uris}
