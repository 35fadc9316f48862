"""Decisions: accept, reject, undo (by hunk, file, proposal or task), committed with their
journaled effects before anything is applied."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from ..domain import commit_keep, fileop
from ..domain.anchor import LineIndex, find_applied, text_at
from ..domain.decided import Decided
from ..domain.effect_outcome import Action, EffectEdit, State
from ..domain.model import Hunk, Kind, lines_of
from ..domain.neighbours import context_now
from ..domain.shapes import JSON
from ..domain.status import Decide, Status, TransitionError, moved_by, plan
from ..domain.text import detect_eol, normalize_eol
from ..domain.verdict import classify
from ..errors import Conflict, InvalidParams, OutsideWorkspace, StetError, TooLarge, UnknownHunk
from ..faults import fault
from ..store import EffectRow, Tx
from ..store.rows import now_iso
from ..workspace import owners, safe
from .config import new_id
from .effects import Effects
from .memory import Memory
from .state import ReviewState


class Contents:
    """What each file holds now, read and indexed once for a whole decision: an undo of N
    applied hunks in one file reads it once and builds one LineIndex, not N of each. An open
    buffer is taken as it is at each look (its index is rebuilt if it changed meanwhile)."""

    def __init__(self, state: ReviewState):
        self.st = state
        self._files: dict[str, list[str] | None] = {}
        self._indexes: dict[str, tuple[tuple[int | None, int] | None, LineIndex]] = {}

    async def lines(self, uri: str) -> list[str] | None:
        doc = self.st.doc(uri)
        if doc is not None:
            return doc.lines
        if uri not in self._files:
            self._files[uri] = await self.st.lines_now(uri)
        return self._files[uri]

    def index(self, uri: str, lines: list[str]) -> LineIndex:
        doc = self.st.doc(uri)
        # A buffer changes in place: its index is reused only while its version says it did not.
        key = (doc.version, len(lines)) if doc is not None else None
        cached = self._indexes.get(uri)
        if (
            cached is not None
            and cached[1].lines is lines
            and cached[0] == key
            and (doc is None or doc.version is not None)
        ):
            return cached[1]
        index = LineIndex(lines)
        self._indexes[uri] = (key, index)
        return index

    async def text(self, uri: str) -> str | None:
        doc = self.st.doc(uri)
        if doc is not None:
            return doc.text
        lines = await self.lines(uri)
        return None if lines is None else "".join(lines)


def refused(exc: TransitionError, h: Hunk) -> Conflict:
    """A decision the hunk's status does not allow; a hunk decided in parts names them."""
    message = str(exc)
    if h.status == Status.SUPERSEDED and h.parts is not None:
        action = message.split(" ", 2)[1]  # "cannot ACTION hunk ID: it is superseded"
        message = f"cannot {action} hunk {h.id}: it was decided in parts: decide {h.parts[0]} or {h.parts[1]} instead"
    return Conflict(message, {"hunkId": h.id, "status": exc.current.value})


def _bytes(text: str | None) -> int:
    return 0 if text is None else len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A decision as asked: what to do to which hunks (`ids`, deduplicated), with what."""

    op_id: str
    action: Decide
    ids: list[str]
    expected: dict[str, int] | None = None  # hunk id -> the version the caller saw
    feedback: str | None = None
    text: str | None = None  # accept with changes: the developer's own new text
    left: dict[str, str] | None = None  # a pull fills it: what cannot land here, and why
    by_commit: str | None = None  # an accept a commit made of kept hunks (domain/commit_keep.py)

    def logged(self) -> JSON:
        """Its arguments as the op log keeps them."""
        args: JSON = {"hunkIds": self.ids}
        if self.by_commit is not None:
            args["decidedBy"], args["commit"] = "commit", self.by_commit
        if self.feedback is not None:
            args["feedback"] = self.feedback
        if self.text is not None:
            args["text"] = self.text
        return args


class Deciding:
    """decide and its checks."""

    def __init__(self, state: ReviewState, memory: Memory, effects: Effects):
        self.st = state
        self.memory = memory
        self.effects = effects

    async def decide(
        self,
        action: Decide,
        hunk_ids: list[str] | None = None,
        *,
        uri: str | None = None,
        proposal_id: str | None = None,
        task_id: str | None = None,
        request_id: str | None = None,
        expected: dict[str, int] | None = None,
        feedback: str | None = None,
        text: str | None = None,
        left: dict[str, str] | None = None,
        by_commit: str | None = None,
    ) -> Decided:
        """accept / reject / undo / reapply, of given hunks or of every pending hunk of a file,
        proposal or task. All or nothing, idempotent by request id - except `pull`: a reapply
        of what can land in this checkout, where each hunk that cannot is put in `left` (its
        id: why, and what to do about the checkout) instead of refusing the others.
        `by_commit`: an accept that commit made of kept hunks waiting for review (only those)."""
        st = self.st
        store = st.require_store()
        if request_id is not None:
            st.limits.check_id("requestId", request_id)
        if text is not None and (hunk_ids is None or len(hunk_ids) != 1):
            raise InvalidParams("`text` (accept with changes) takes exactly one hunk id")
        op_id = request_id or new_id("op-")
        if uri is not None:
            uri = st.uri_of(uri)
        no_revert: set[str] = set()  # undone applied hunks whose change was gone already
        async with st.op_lock:
            effects: list[EffectRow] = []
            async with store.write() as tx:
                if hunk_ids is not None:  # the op (a replay?) and the hunks in one hop
                    prior, rows = await tx.op_and_hunks(op_id, list(dict.fromkeys(hunk_ids)))
                else:
                    prior = await tx.op(op_id)
                if prior is not None:
                    ids = list(prior.args.get("hunkIds") or [])
                    if left is not None:
                        left.update(prior.args.get("left") or {})  # the first answer's
                else:
                    if hunk_ids is not None:
                        ids = list(dict.fromkeys(hunk_ids))
                        missing = [i for i in ids if i not in rows]
                        if missing:
                            raise UnknownHunk(f"unknown hunk id(s): {', '.join(missing)}", {"hunkIds": missing})
                    else:
                        wanted = moved_by(action)
                        found = await tx.hunks_where(uri=uri, proposal_id=proposal_id, task_id=task_id, statuses=wanted)
                        rows = {h.id: h for h in found}
                        ids = list(rows)
                    asked = Decision(
                        op_id=op_id,
                        action=action,
                        ids=ids,
                        expected=expected,
                        feedback=feedback,
                        text=text,
                        left=left,
                        by_commit=by_commit,
                    )
                    effects, no_revert = await self._decide_in(tx, asked, rows)
                    # Until its effect has run, memory keeps the hunk where the text really is.
                    for effect in effects:
                        st.in_flight.update(e["hunkId"] for e in effect.edits)
                        st.effect_uris.add(effect.uri)
                loaded = tx.hunks_since_at_commit(st.seen_lsn)
            try:
                fault("decide:after-commit")
                await self.memory.sync(loaded)
                for effect in effects:
                    await self.effects.run_guarded(effect)
                if no_revert:
                    await self.recheck(no_revert)
            finally:
                for effect in effects:
                    st.settle(e["hunkId"] for e in effect.edits)
        # The hunks as this decision left them (a copy: the review's own go on changing).
        return Decided(tuple(st.hunks[i].copy() for i in ids if i in st.hunks))

    async def _decide_in(self, tx: Tx, d: Decision, rows: dict[str, Hunk]) -> tuple[list[EffectRow], set[str]]:
        """Record the decision in `tx`: the effects it journals, and the undone applied hunks
        whose change was gone already (nothing to revert)."""
        self._check_asked(d, rows)
        if d.by_commit is not None:
            self._check_kept(d, rows)
        seen = Contents(self.st)
        if d.action in (Decide.REAPPLY, Decide.PULL):
            left = d.left if d.action == Decide.PULL else None
            return await self._reapply_in(tx, d.op_id, d.ids, rows, seen, left), set()
        targets: dict[str, Status] = {}
        for hid in d.ids:
            try:
                target = plan(d.action, rows[hid].status, hid)
            except TransitionError as exc:
                raise refused(exc, rows[hid]) from None
            if target is not None:
                targets[hid] = target
        reverts, no_revert = [], set()
        for h in [rows[h] for h, t in targets.items() if rows[h].status == Status.APPLIED]:
            if await self._revert_needed(h, seen):
                reverts.append(h)
            else:
                # Its new text is gone already (a checkout, an editor's undo, another tool):
                # there is nothing to revert; the decision alone goes back to pending.
                no_revert.add(h.id)
        # A kept hunk's new text was left in the file for review: rejecting it puts the old
        # text back (journaled like an undo; written only where the new text still is).
        reverts += [rows[h] for h, t in targets.items() if t == Status.REJECTED and self._kept_in_file(rows[h])]
        # Accepted with the developer's text, a kept hunk's edit goes from the agent's text (in
        # the file) to theirs; accepted as it is, it writes nothing (its text is there already).
        kept = {h for h, t in targets.items() if t == Status.ACCEPTED and self._kept_in_file(rows[h])}
        lsn = await tx.log(d.op_id, d.action, d.logged())
        stamp = now_iso()
        for hid in targets:
            mem = self.st.hunks.get(hid)
            if mem is not None:
                rows[hid].line = mem.line
        if d.text is not None and d.action == Decide.ACCEPT:
            for hid in targets:
                h = rows[hid]
                eol = detect_eol(h.old_text + "".join(c for c in (*h.ctx_before, *h.ctx_after) if c))
                given = lines_of(normalize_eol(d.text, eol))
                h.applied_text = None if given == h.new else given
        # The journal is written from the hunks as they are before this decision.
        journal = [
            (
                name,
                [(h, self.effect_edit(h, name, from_new=h.id in kept and h.applied_text is not None)) for h in group],
            )
            for name, group in (
                (Action.APPLY, [rows[h] for h, t in targets.items() if t == Status.ACCEPTED]),
                # Undo runs in the reverse order of apply: a file's edits are reverted where the
                # file is now, before the rename that moved it there is undone.
                (Action.REVERT, sorted(reverts, key=lambda h: h.kind != Kind.EDIT)),
            )
        ]
        await self._journal_context(journal, seen)
        out_of_file = {h.id for h in reverts} | no_revert
        for hid, target in targets.items():
            self._move(d, rows[hid], target, lsn, stamp, hid in out_of_file)
        await tx.save_hunks([rows[hid] for hid in targets])
        effects = []
        for action_name, group in journal:
            by_uri: dict[str, list[EffectEdit]] = {}
            for h, edit in group:
                by_uri.setdefault(h.uri, []).append(edit)
            for uri, edits in by_uri.items():
                effects.append(await self.add_effect(tx, lsn, uri, action_name, edits))
        return effects, no_revert

    def _check_asked(self, d: Decision, rows: dict[str, Hunk]) -> None:
        """The versions the caller expects, and what the decision would store, before anything."""
        for hid, version in (d.expected or {}).items():
            if hid in rows and rows[hid].version != version:
                raise Conflict(
                    f"hunk {hid} is at version {rows[hid].version}, not {version}: it changed meanwhile",
                    {"hunkId": hid, "version": rows[hid].version},
                )
        # Feedback is kept per hunk (and once in the op log), text twice: all of it counts.
        stored = (len(d.ids) + 1) * _bytes(d.feedback) + 2 * _bytes(d.text) + sum(len(i) for i in d.ids)
        if stored > self.st.limits.max_bytes:
            raise TooLarge(
                f"this decision would make Stet store {stored} bytes ({len(d.ids)} hunk(s) x the feedback); "
                f"the limit is {self.st.limits.max_bytes}: give shorter feedback, or decide fewer hunks at once"
            )

    @staticmethod
    def _check_kept(d: Decision, rows: dict[str, Hunk]) -> None:
        """A commit decides kept hunks waiting for review, nothing else (checked in the
        transaction: another process may have decided one meanwhile)."""
        for hid in d.ids:
            if d.action != Decide.ACCEPT or not commit_keep.eligible(rows[hid]):
                raise Conflict(
                    f"commit {d.by_commit} does not decide hunk {hid}: it is not kept waiting for review",
                    {"hunkId": hid, "status": rows[hid].status.value},
                )

    @staticmethod
    def _move(d: Decision, h: Hunk, target: Status, lsn: int, stamp: str, out_of_file: bool) -> None:
        """The hunk as the decision leaves it (`out_of_file`: its new text is out of the file)."""
        h.move_to(target, d.action)
        h.lsn, h.problem = lsn, None
        h.in_file = None  # only an applied hunk has one; an effect sets it when applied
        if out_of_file:
            h.kept = False  # an ordinary hunk from now on
        h.by_commit = d.by_commit if target == Status.ACCEPTED else None
        if d.action == Decide.UNDO:
            h.feedback, h.decided_at, h.applied_text = None, None, None
        else:
            h.decided_at = stamp
            if d.feedback is not None:
                h.feedback = d.feedback

    async def add_effect(self, tx: Tx, lsn: int, uri: str, action: Action, edits: list[EffectEdit]) -> EffectRow:
        """Journal an effect: into the open buffer (this process's to settle), else the file.
        A file outside this process's roots is refused (the whole decision with it): its hunk
        is decided where its folder is a root, never found stale for being out of sight here."""
        ws = self.st.ws
        for where in (uri, *(u for e in edits if (u := e.get("newUri")))):
            if not ws.holds(where):
                ids = ", ".join(dict.fromkeys(e["hunkId"] for e in edits))
                raise OutsideWorkspace(
                    f"{ids}: {where} is outside this workspace ({', '.join(ws.roots) or 'no root'}); nothing was "
                    f"decided. Decide it where its folder is a workspace root (open that folder, or give it "
                    f"with --root).",
                    {"hunkIds": list(dict.fromkeys(e["hunkId"] for e in edits)), "uri": where},
                )
        target = "buffer" if uri in self.st.open else "file"
        owner = owners.token() if target == "buffer" else None
        eid = await tx.add_effect(lsn, uri, action, edits, target, owner)
        return EffectRow(
            id=eid,
            lsn=lsn,
            uri=uri,
            action=action,
            edits=edits,
            state=State.PENDING,
            attempts=0,
            target=target,
            owner=owner,
        )

    def _kept_in_file(self, h: Hunk) -> bool:
        mem = self.st.hunks.get(h.id)
        return h.kept and h.status == Status.PENDING and (mem is None or mem.shows_new)

    async def _journal_context(
        self, journal: Sequence[tuple[Action, Sequence[tuple[Hunk, EffectEdit]]]], seen: Contents
    ) -> None:
        """Each journaled edit carries the context its text has in the document now (see
        `domain.neighbours.context_now`), not the one it was proposed with."""
        for _, group in journal:
            for h, edit in group:
                await self.context_now(edit, h, seen)

    async def context_now(self, edit: EffectEdit, h: Hunk, seen: Contents) -> None:
        if h.kind != Kind.EDIT:
            return
        try:
            lines = await seen.lines(h.uri)
        except StetError:
            return
        if lines is None:
            return
        mem = self.st.hunks.get(h.id, h)
        tracked = mem.tracked and h.uri in self.st.open
        fresh = context_now(
            lines,
            lines_of(edit["before"]),
            edit["line"],
            tuple(edit["ctxBefore"]),
            tuple(edit["ctxAfter"]),
            tracked=tracked,
        )
        if fresh is not None:
            edit["ctxBefore"], edit["ctxAfter"] = list(fresh[0]), list(fresh[1])

    @staticmethod
    def effect_edit(h: Hunk, action: Action, from_new: bool = False) -> EffectEdit:
        """The journaled edit of `action` on `h`; `from_new`: an apply over the hunk's own new
        text, which a kept hunk left in the file."""
        if action == Action.APPLY:
            src, dst = (h.new if from_new else h.old), h.replacement
        else:
            src, dst = h.replacement, h.old
        return {
            "hunkId": h.id,
            "kind": h.kind.value,
            "uri": h.uri,
            "newUri": h.new_uri,
            "line": h.line,
            "before": "".join(src),
            "after": "".join(dst),
            "ctxBefore": list(h.ctx_before),
            "ctxAfter": list(h.ctx_after),
        }

    async def _in_place(self, h: Hunk, seen: Contents) -> bool:
        """Is the applied hunk's change in the document now (the buffer when open, else the file)?
        The same judgement as `in_file`: a tracked position is evidence on its own."""
        ws = self.st.ws
        mem = self.st.hunks.get(h.id, h)
        if h.kind != Kind.EDIT:
            try:
                text = await seen.text(h.uri)
            except StetError:  # a symlink, a FIFO, not a text file: nothing Stet may take back
                text = None
            source = await asyncio.to_thread(safe.exists, ws.path_of(h.uri))
            target = h.new_uri is not None and await asyncio.to_thread(safe.exists, ws.path_of(h.new_uri))
            return fileop.undoable(h.kind, text, "".join(mem.replacement), source, target)
        lines = await seen.lines(h.uri)
        if lines is None:
            return not mem.replacement and bool(mem.old)
        tracked = mem.tracked and h.uri in self.st.open
        found = find_applied(
            seen.index(h.uri, lines), mem.replacement, mem.old, mem.line, h.ctx_before, h.ctx_after, tracked=tracked
        )
        if found is not None:
            mem.line = found.line
        return found is not None

    async def _revert_needed(self, h: Hunk, seen: Contents) -> bool:
        """Undo of an applied hunk: True when its change is there to be reverted, False when
        it is gone already (nothing to revert). Its new text present in several places with
        none of them identified is a Conflict: Stet does not guess which to take away."""
        if await self._in_place(h, seen):
            return True
        mem = self.st.hunks.get(h.id, h)
        if h.kind == Kind.EDIT and mem.replacement:
            lines = await seen.lines(h.uri) or []
            places = seen.index(h.uri, lines).positions(mem.replacement[0])
            if any(text_at(lines, mem.replacement, i) for i in places):
                raise Conflict(
                    f"cannot undo hunk {h.id}: its new text is in {h.uri} more than once and none is where "
                    f"Stet left it; remove the copy you do not want, then undo again",
                    {"hunkId": h.id},
                )
        return False

    async def _reapply_in(
        self,
        tx: Tx,
        op_id: str,
        ids: list[str],
        rows: dict[str, Hunk],
        seen: Contents,
        left: dict[str, str] | None = None,
    ) -> list[EffectRow]:
        """Re-apply applied hunks whose change is gone from the document, where the old text
        still is. An applied hunk still in place is left as it is (a no-op). A pull (`left`
        given) re-applies what can land and leaves the rest, saying why, in `left`."""
        todo = []
        for hid in ids:
            h = rows[hid]
            if h.status != Status.APPLIED:
                if left is not None:
                    continue  # decided otherwise since it was listed: nothing to pull
                raise Conflict(
                    f"cannot re-apply hunk {hid}: it is {h.status.value} (only an applied hunk whose text was "
                    f"removed is re-applied; accept a pending one)",
                    {"hunkId": hid, "status": h.status.value},
                )
            if await self._in_place(h, seen):
                continue
            if not await self._applicable(h, seen):
                if left is not None:
                    left[hid] = self._not_here(h)
                    continue
                raise Conflict(
                    f"cannot re-apply hunk {hid}: neither its new text nor the text it replaces is in {h.uri} "
                    f"any more; undo the decision (`stet.undo`) and ask the agent again",
                    {"hunkId": hid},
                )
            todo.append(h)
        args: dict[str, object] = {"hunkIds": ids}
        if left:
            args["left"] = left
        lsn = await tx.log(op_id, Decide.PULL if left is not None else Decide.REAPPLY, args)
        effects = []
        by_uri: dict[str, list[EffectEdit]] = {}
        for h in todo:
            mem = self.st.hunks.get(h.id)
            if mem is not None:
                h.line = mem.line
            h.lsn = lsn
            by_uri.setdefault(h.uri, []).append(self.effect_edit(h, Action.APPLY))
        await tx.save_hunks(todo)
        for uri, edits in by_uri.items():
            effects.append(await self.add_effect(tx, lsn, uri, Action.REAPPLY, edits))
        return effects

    def _not_here(self, h: Hunk) -> str:
        """Why a hunk cannot be pulled into this checkout, and what to do about the checkout
        (the decision is the review's and stands)."""
        path = self.st.ws.rel(h.uri)
        what = (
            f"the lines it replaces ({path}, line {h.line + 1}) are not in this checkout as it expects them"
            if h.kind == Kind.EDIT
            else f"this checkout's {path} is not as its {h.kind} expects"
        )
        return (
            f"{what}: changed here, or this checkout is at another commit. Stash the change made here (`git "
            f"stash`) or bring this checkout to the commit the others have (`git pull`), then run `stet pull` again"
        )

    async def _applicable(self, h: Hunk, seen: Contents) -> bool:
        """Can the hunk's change be made again: is the text it replaces where it was?"""
        mem = self.st.hunks.get(h.id, h)
        if h.kind != Kind.EDIT:
            try:
                text = await seen.text(h.uri)
            except StetError:
                return False
            target = h.new_uri is not None and await asyncio.to_thread(safe.exists, self.st.ws.path_of(h.new_uri))
            return fileop.applicable(h.kind, text, h.old_text, "".join(mem.replacement), target)
        lines = await seen.lines(h.uri)
        if lines is None:
            return False
        v = classify(
            lines,
            mem.old,
            mem.replacement,
            mem.line,
            h.ctx_before,
            h.ctx_after,
            seen.index(h.uri, lines),
            tracked=mem.tracked and h.uri in self.st.open,
        )
        return v.outcome != "stale"

    async def recheck(self, ids: set[str]) -> None:
        """Hunks back to pending without a revert: pending where their old text is, else stale."""
        st = self.st
        by_uri: dict[str, list[Hunk]] = {}
        for hid in ids:
            h = st.hunks.get(hid)
            if h is not None:
                by_uri.setdefault(h.uri, []).append(h)
        derived = []
        for uri, hunks in by_uri.items():
            try:
                lines = await st.lines_now(uri)
            except StetError:
                lines = None
            derived += self.memory.relocate(lines, hunks, buffer=uri in st.open)
        if derived:
            self.memory.derive(derived)
        await self.memory.flush_derived()
