"""Deciding some lines of a hunk (docs/protocol.md, "Parts of a hunk"): the hunk is split into
the part decided and the rest, in one durable operation of the decision path.

One transaction: the op log entry (an `accept` or `reject` of the part, so whoever reads
decisions reads this one too; its `split` says what was split and the rest's id, and a replay
of its requestId answers from it), the original hunk `superseded` with its two `parts`, the
part (accepted, with its journaled edit, or rejected with the feedback) and the rest (pending)
as new hunks of the same task, proposal and message. Then, as any accept, the edit is carried
out exactly once; the rest, whose old text is the part's new text, is judged once it is there.
A selection of every line decides the whole hunk through `Deciding` (no split).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..domain.decided import Split
from ..domain.effect_outcome import Action
from ..domain.hunks import Lines
from ..domain.model import Hunk, Kind
from ..domain.parts import BadSelection, Piece, Selection, check_count, split, stage
from ..domain.shapes import JSON
from ..domain.status import Decide, Status, TransitionError, plan
from ..errors import Conflict, InvalidParams, TooLarge, UnknownHunk
from ..faults import fault, pause
from ..store import EffectRow, Tx
from ..store.rows import now_iso
from .config import new_id
from .deciding import Contents, Deciding, refused
from .effects import Effects
from .memory import Memory
from .state import ReviewState

Ranges = Sequence[Sequence[int]]


class Shown(NamedTuple):
    """Where the split hunk is in the document (`line`), and for a rejected part of a hunk kept
    in the file for review, the text the document shows once its lines are taken out."""

    line: int
    kept_after: Lines | None


class Splitting:
    """accept / reject of a part of a hunk."""

    def __init__(self, state: ReviewState, memory: Memory, effects: Effects, deciding: Deciding):
        self.st = state
        self.memory = memory
        self.effects = effects
        self.deciding = deciding

    async def decide_lines(
        self,
        action: Decide,
        hunk_id: str,
        old: Ranges,
        new: Ranges,
        *,
        feedback: str | None = None,
        request_id: str | None = None,
    ) -> Split:
        """Accept or reject the selected lines of a hunk: the part and the rest (None: the
        selection was the whole hunk, decided as it is)."""
        st = self.st
        store = st.require_store()
        if request_id is not None:
            st.limits.check_id("requestId", request_id)
        try:
            check_count(old, new)  # before the lock: a hostile selection holds up no one
        except BadSelection as exc:
            raise InvalidParams(f"hunk {hunk_id}: {exc}", {"hunkId": hunk_id}) from None
        if feedback is not None and 3 * len(feedback.encode("utf-8", "surrogatepass")) > st.limits.max_bytes:
            raise TooLarge(f"the feedback is larger than Stet keeps (limit {st.limits.max_bytes} bytes)")
        op_id = request_id or new_id("op-")
        async with st.op_lock:
            made: tuple[Hunk, Hunk, EffectRow | None] | None = None
            async with store.write() as tx:
                prior, rows = await tx.op_and_hunks(op_id, [hunk_id])
                if prior is None:
                    h = rows.get(hunk_id)
                    if h is None:
                        raise UnknownHunk(f"unknown hunk id(s): {hunk_id}", {"hunkIds": [hunk_id]})
                    pieces = self._pieces(action, h, old, new)
                    if pieces is not None:
                        effect = await self._split_in(tx, op_id, action, h, *pieces, old, new, feedback)
                        made = (pieces[0], pieces[1], effect)
                        # Until the part's edit has run, memory keeps both where the text really is.
                        st.in_flight.update((pieces[0].id, pieces[1].id))
                        if effect is not None:
                            st.effect_uris.add(effect.uri)
                loaded = tx.hunks_since_at_commit(st.seen_lsn)
            if prior is not None:  # a replay: the first answer, as the store has it now
                await self.memory.sync(loaded)
                ids = list(prior.args.get("hunkIds") or [hunk_id])
                return self._answer(ids[0], (prior.args.get("split") or {}).get("restId"))
            if made is not None:
                part, rest, effect = made
                try:
                    fault("split:after-commit")
                    await self.memory.sync(loaded)
                    for piece in (part, rest):
                        if (m := st.hunks.get(piece.id)) is not None:
                            m.tracked = piece.tracked
                    if effect is not None:
                        await pause("split:before-effect")
                        await self.effects.run_guarded(effect)
                finally:
                    st.settle((part.id, rest.id))
                # The rest's old text is what the file holds now (the part's new text, once
                # accepted): judged against the content like any hunk, from where it was made.
                mem = st.hunks.get(rest.id)
                if mem is not None:
                    mem.line = rest.line
                await self.deciding.recheck({rest.id})
        if made is None:  # every changed line: the hunk decided as it is (the op lock taken there)
            return await self._whole(action, hunk_id, feedback, op_id)
        return self._answer(part.id, rest.id)

    async def _whole(self, action: Decide, hunk_id: str, feedback: str | None, op_id: str) -> Split:
        """Every changed line selected: the hunk decided as it is, through the decision path."""
        decided = await self.deciding.decide(action, [hunk_id], request_id=op_id, feedback=feedback)
        return Split(decided.hunks[0] if decided.hunks else self.st.hunks[hunk_id], None)

    def _answer(self, part_id: str, rest_id: str | None) -> Split:
        hunks = self.st.hunks
        return Split(hunks.get(part_id), hunks.get(rest_id) if rest_id is not None else None)

    def _pieces(self, action: Decide, h: Hunk, old: Ranges, new: Ranges) -> tuple[Hunk, Hunk, Shown] | None:
        """The part and the rest as new hunks (not stored yet), None for the whole hunk; the
        selection checked first (InvalidParams), then whether the hunk can be split now."""
        if h.status == Status.SUPERSEDED:  # its lines are its parts' now, whatever was selected
            try:
                plan(action, h.status, h.id)
            except TransitionError as exc:
                raise refused(exc, h) from None
        try:
            sel = Selection.of(h.old, h.new, old, new)
        except BadSelection as exc:
            raise InvalidParams(f"hunk {h.id}: {exc}", {"hunkId": h.id, **exc.data}) from None
        if sel.whole(h.old, h.new):
            return None
        try:
            plan(action, h.status, h.id)
        except TransitionError as exc:
            raise refused(exc, h) from None
        if h.status != Status.PENDING:
            raise Conflict(
                f"cannot decide lines of hunk {h.id}: it is {h.status.value}; only a pending hunk is split",
                {"hunkId": h.id, "status": h.status.value},
            )
        if h.kind != Kind.EDIT:
            raise InvalidParams(f"hunk {h.id} is a file {h.kind.value}: only an edit's lines can be decided apart")
        try:
            out = split(h.old, h.new, h.ctx_before, h.ctx_after, sel, accept=action == Decide.ACCEPT)
        except BadSelection as exc:
            raise InvalidParams(f"hunk {h.id}: {exc}", {"hunkId": h.id}) from None
        if out.rest is None:
            return None
        mem = self.st.hunks.get(h.id)
        line = mem.line if mem is not None else h.line
        part, rest = self._hunk(h, out.part, line), self._hunk(h, out.rest, line)
        # Placed from a position followed through an open buffer's edits, so are theirs: a line
        # typed right next to the hunk is then no reason to take the part for lost.
        part.tracked = rest.tracked = mem is not None and mem.tracked and h.uri in self.st.open
        # Kept in the file for review (the agent's text is what the document shows): so is the
        # rest's, and a rejected part's lines are taken out of it (see _split_in).
        rest.kept = h.kept and (mem.shows_new if mem is not None else h.shown_when_loaded())
        shows = None
        if rest.kept and action != Decide.ACCEPT:
            shows = stage(h.old, h.new, sel.complement(h.old, h.new))
        return part, rest, Shown(line, shows)

    @staticmethod
    def _hunk(h: Hunk, piece: Piece, line: int) -> Hunk:
        return h.split_off(new_id("h"), line + piece.offset, piece.old, piece.new, piece.ctx_before, piece.ctx_after)

    async def _split_in(
        self,
        tx: Tx,
        op_id: str,
        action: Decide,
        h: Hunk,
        part: Hunk,
        rest: Hunk,
        shown: Shown,
        old: Ranges,
        new: Ranges,
        feedback: str | None,
    ) -> EffectRow | None:
        """Record the split in `tx`; the accepted part's journaled edit (None for a reject)."""
        args: JSON = {
            "hunkIds": [part.id],
            "split": {"hunkId": h.id, "old": [list(r) for r in old], "new": [list(r) for r in new], "restId": rest.id},
        }
        if feedback is not None:
            args["feedback"] = feedback
        lsn = await tx.log(op_id, action, args)
        stamp = now_iso()
        part.move_to(Status.ACCEPTED if action == Decide.ACCEPT else Status.REJECTED, action)
        part.decided_at = stamp
        if feedback is not None:
            part.feedback = feedback
        if rest.kept and action == Decide.ACCEPT:
            # The document shows the whole hunk's new text, the kept rest's: the part's change
            # is in it already, under the rest's. Nothing to write.
            part.move_to(Status.APPLIED, "accept")
            part.in_file = True
        h.move_to(Status.SUPERSEDED, "split")
        h.parts = (part.id, rest.id)
        h.in_file, h.kept, h.problem = None, False, None
        for each in (part, rest, h):
            each.lsn = lsn
        await tx.add_hunks([part, rest])
        await tx.save_hunks([h])
        await tx.set_parts(h.id, h.parts)
        seen = Contents(self.st)
        if shown.kept_after is not None:  # a rejected part's lines taken out of the agent's text
            edit = self.deciding.effect_edit(h, Action.REVERT)
            edit["hunkId"], edit["line"], edit["after"] = rest.id, shown.line, "".join(shown.kept_after)
            await self.deciding.context_now(edit, h, seen)
            return await self.deciding.add_effect(tx, lsn, h.uri, Action.REVERT, [edit])
        if action != Decide.ACCEPT or rest.kept:
            return None
        edit = self.deciding.effect_edit(part, Action.APPLY)
        await self.deciding.context_now(edit, part, seen)
        return await self.deciding.add_effect(tx, lsn, h.uri, Action.APPLY, [edit])
