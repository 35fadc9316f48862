"""Decisions: accept, reject, undo (by hunk, file, proposal or task), committed with their
journaled effects before anything is applied."""

from __future__ import annotations

import asyncio
import os

from ..domain import fileop
from ..domain.anchor import LineIndex, at_with_context, locate
from ..domain.model import Hunk, lines_of
from ..domain.status import Status, TransitionError, plan
from ..domain.text import detect_eol, normalize_eol, split_lines
from ..errors import Conflict, InvalidParams, UnknownHunk
from ..faults import fault
from ..store import EffectRow, Tx
from ..store.rows import now_iso
from ..workspace import owners
from ..workspace.files import read_text
from .config import new_id
from .effects import Effects
from .memory import Memory
from .state import ReviewState


class Deciding:
    """decide and its checks."""

    def __init__(self, state: ReviewState, memory: Memory, effects: Effects):
        self.st = state
        self.memory = memory
        self.effects = effects

    async def decide(
        self,
        action: str,
        hunk_ids: list[str] | None = None,
        *,
        uri: str | None = None,
        proposal_id: str | None = None,
        task_id: str | None = None,
        request_id: str | None = None,
        expected: dict[str, int] | None = None,
        feedback: str | None = None,
        text: str | None = None,
    ) -> list[dict]:
        """accept / reject / undo, of given hunks or of every pending hunk of a file,
        proposal or task. All or nothing, idempotent by request id."""
        st = self.st
        store = st.require_store()
        if request_id is not None:
            st.limits.check_id("requestId", request_id)
        if text is not None and (hunk_ids is None or len(hunk_ids) != 1):
            raise InvalidParams("`text` (accept with changes) takes exactly one hunk id")
        op_id = request_id or new_id("op-")
        if uri is not None:
            uri = st.uri_of(uri)
        async with st.op_lock:
            effects: list[EffectRow] = []
            async with store.write() as tx:
                if hunk_ids is not None:  # the op (a replay?) and the hunks in one hop
                    prior, rows = await tx.op_and_hunks(op_id, list(dict.fromkeys(hunk_ids)))
                else:
                    prior = await tx.op(op_id)
                if prior is not None:
                    ids = list(prior.args.get("hunkIds") or [])
                else:
                    if hunk_ids is not None:
                        ids = list(dict.fromkeys(hunk_ids))
                        missing = [i for i in ids if i not in rows]
                        if missing:
                            raise UnknownHunk(f"unknown hunk id(s): {', '.join(missing)}", {"hunkIds": missing})
                    else:
                        wanted = [Status.PENDING] + ([Status.STALE] if action == "reject" else [])
                        found = await tx.hunks_where(uri=uri, proposal_id=proposal_id, task_id=task_id, statuses=wanted)
                        rows = {h.id: h for h in found}
                        ids = list(rows)
                    effects = await self._decide_in(tx, op_id, action, ids, rows, expected, feedback, text)
                    # Until its effect has run, memory keeps the hunk where the text really is.
                    for effect in effects:
                        st.in_flight.update(e["hunkId"] for e in effect.edits)
                        st.effect_uris.add(effect.uri)
            try:
                fault("decide:after-commit")
                await self.memory.sync()
                for effect in effects:
                    await self.effects.run(effect)
            finally:
                for effect in effects:
                    st.in_flight.difference_update(e["hunkId"] for e in effect.edits)
        return [st.hunks[i].state() for i in ids if i in st.hunks]

    async def _decide_in(
        self,
        tx: Tx,
        op_id: str,
        action: str,
        ids: list[str],
        rows: dict[str, Hunk],
        expected: dict[str, int] | None,
        feedback: str | None,
        text: str | None,
    ) -> list[EffectRow]:
        for hid, version in (expected or {}).items():
            if hid in rows and rows[hid].version != version:
                raise Conflict(
                    f"hunk {hid} is at version {rows[hid].version}, not {version}: it changed meanwhile",
                    {"hunkId": hid, "version": rows[hid].version},
                )
        targets: dict[str, Status] = {}
        for hid in ids:
            try:
                target = plan(action, rows[hid].status, hid)
            except TransitionError as exc:
                raise Conflict(str(exc), {"hunkId": hid, "status": exc.current.value}) from None
            if target is not None:
                targets[hid] = target
        reverts = [rows[h] for h, t in targets.items() if rows[h].status == Status.APPLIED]
        for h in reverts:
            await self._check_revertible(h)
        # A kept hunk's new text was left in the file for review: rejecting it puts the old
        # text back (journaled like an undo; written only where the new text still is).
        reverts += [rows[h] for h, t in targets.items() if t == Status.REJECTED and self._kept_in_file(rows[h])]
        args: dict[str, object] = {"hunkIds": ids}
        if feedback is not None:
            args["feedback"] = feedback
        if text is not None:
            args["text"] = text
        lsn = await tx.log(op_id, action, args)
        stamp = now_iso()
        for hid in targets:
            mem = self.st.hunks.get(hid)
            if mem is not None:
                rows[hid].line = mem.line
        if text is not None and action == "accept":
            for hid in targets:
                h = rows[hid]
                eol = detect_eol(h.old_text + "".join(c for c in (*h.ctx_before, *h.ctx_after) if c))
                given = lines_of(normalize_eol(text, eol))
                h.applied_text = None if given == h.new else given
        # The journal is written from the hunks as they are before this decision.
        journal = [
            (name, [(h, self._effect_edit(h, name)) for h in group])
            for name, group in (
                ("apply", [rows[h] for h, t in targets.items() if t == Status.ACCEPTED]),
                # Undo runs in the reverse order of apply: a file's edits are reverted where the
                # file is now, before the rename that moved it there is undone.
                ("revert", sorted(reverts, key=lambda h: h.kind != "edit")),
            )
        ]
        reverted = {h.id for h in reverts}
        for hid, target in targets.items():
            h = rows[hid]
            h.status, h.version, h.lsn = target, h.version + 1, lsn
            if hid in reverted:
                h.kept = False  # its new text is taken out of the file: an ordinary hunk from now on
            if action == "undo":
                h.feedback, h.decided_at, h.applied_text = None, None, None
            else:
                h.decided_at = stamp
                if feedback is not None:
                    h.feedback = feedback
            await tx.save_hunk(h)
        effects = []
        for action_name, group in journal:
            by_uri: dict[str, list[tuple[Hunk, dict]]] = {}
            for h, edit in group:
                by_uri.setdefault(h.uri, []).append((h, edit))
            for uri, pairs in by_uri.items():
                edits = [edit for _, edit in pairs]
                where = "buffer" if uri in self.st.open else "file"
                owner = owners.token() if where == "buffer" else None
                eid = await tx.add_effect(lsn, uri, action_name, edits, where, owner)
                effects.append(EffectRow(eid, lsn, uri, action_name, edits, "pending", 0, where, owner))
        return effects

    def _kept_in_file(self, h: Hunk) -> bool:
        mem = self.st.hunks.get(h.id)
        return h.kept and h.status == Status.PENDING and (mem is None or mem.shows_new)

    @staticmethod
    def _effect_edit(h: Hunk, action: str) -> dict:
        src, dst = (h.old, h.replacement) if action == "apply" else (h.replacement, h.old)
        return {
            "hunkId": h.id,
            "kind": h.kind,
            "uri": h.uri,
            "newUri": h.new_uri,
            "line": h.line,
            "before": "".join(src),
            "after": "".join(dst),
            "ctxBefore": list(h.ctx_before),
            "ctxAfter": list(h.ctx_after),
        }

    async def _check_revertible(self, h: Hunk) -> None:
        ws = self.st.ws
        mem = self.st.hunks.get(h.id, h)
        if h.kind != "edit":
            text = await self._current_text(h.uri)
            source = await asyncio.to_thread(os.path.lexists, ws.resolve(h.uri))
            target = h.new_uri is not None and await asyncio.to_thread(os.path.lexists, ws.resolve(h.new_uri))
            if fileop.undoable(h.kind, text, "".join(mem.replacement), source, target):
                return
            raise Conflict(
                f"cannot undo hunk {h.id}: the file changed since the {h.kind} was applied", {"hunkId": h.id}
            )
        lines = await self._current_lines(h.uri)
        if lines is not None:
            found = at_with_context(lines, mem.replacement, mem.line, h.ctx_before, h.ctx_after) or locate(
                LineIndex(lines), mem.replacement, mem.line, h.ctx_before, h.ctx_after, trust_hint=False
            )
            if found:
                return
        raise Conflict(f"cannot undo hunk {h.id}: its new text is no longer in {h.uri}", {"hunkId": h.id})

    async def _current_text(self, uri: str) -> str | None:
        doc = self.st.doc(uri)
        if doc is not None:
            return doc.text
        return await asyncio.to_thread(read_text, self.st.ws.resolve(uri))

    async def _current_lines(self, uri: str) -> list[str] | None:
        doc = self.st.doc(uri)
        if doc is not None:
            return doc.lines
        text = await asyncio.to_thread(read_text, self.st.ws.resolve(uri))
        return None if text is None else split_lines(text)
