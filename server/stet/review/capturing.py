"""Capture: an agent's edits, already in the files, become a proposal, and the files get
their baseline back - one durable operation.

The proposal, its hunks and a restore journal (each file: the content it must hold now,
the content it gets) commit in one transaction; then each file is set, only where it still
holds what the agent left; then the journal is closed. A process killed in between leaves
the journal open, and the next process that opens the store finishes it (`finish_open`):
never a proposal whose files still hold the agent's version, never a file restored
without its proposal. A capture that keeps the agent's version (`keep`) journals only what
the developer already refused; its hunks are `kept`: their new text is in the file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping
from dataclasses import replace

from ..domain.capture import kept_anchors, settle
from ..domain.hunks import Context
from ..domain.model import Hunk, Kind
from ..domain.proposal import BadProposal, Change, Plan, Planned
from ..domain.proposal import plan as plan_proposal
from ..domain.proposed import Captured, Proposed
from ..domain.shapes import JSON
from ..domain.status import Status
from ..domain.task import LIVE, same_change
from ..errors import Conflict, InvalidParams, StetError, TooLarge
from ..faults import fault
from ..store import Tx
from ..store import captures as sql
from ..store import loop as loop_sql
from ..workspace import contents, git
from ..workspace.blobs import digest
from ..workspace.locks import interprocess_lock
from .config import new_id
from .memory import Memory
from .outside_changes import OutsideChanges
from .proposing import Proposing, record_hunks
from .state import ReviewState

log = logging.getLogger(__name__)


def _restores(targets: Mapping[str, str | None], now: Mapping[str, str | None]) -> list[JSON]:
    """The restore journal: each file whose content must change, what it holds now, what it gets."""
    return [
        {"uri": uri, "expect": _hash(now.get(uri)), "text": text}
        for uri, text in sorted(targets.items())
        if text != now.get(uri)
    ]


class Capturing:
    def __init__(self, state: ReviewState, memory: Memory, proposing: Proposing, outside: OutsideChanges):
        self.st = state
        self.memory = memory
        self.proposing = proposing
        self.outside = outside

    async def capture(
        self,
        capture_id: str,
        changes: list[Change],
        bases: Mapping[str, str | None],
        now: Mapping[str, str | None],
        *,
        keep: bool,
        in_place: bool = True,
        task_id: str | None,
        agent: str | None,
        message: str | None,
        edit_hash: str,
        consume: tuple[str, list[str], list[str]] | None = None,
        cleanup: JSON | None = None,
        turn_of: str | None = None,
        on_disk: Mapping[str, str | None] | None = None,
        anew: Collection[str] = (),
    ) -> Captured:
        """Store the proposal of `changes` (made against `bases`, giving `now`: the agent's
        version, by normalised uri) with its restore journal, then restore. `in_place`: the
        files hold `now` (the agent wrote them); else they hold `bases` (the agent worked
        elsewhere) and nothing is written. `on_disk`: what the files hold when it is neither
        (a change an editor is about to write, over kept hunks of the task already there):
        checked as `now` or `bases` would be; nothing is written either. `consume`: (task key, uris, prefixes) of the
        snapshot entries this capture used. `turn_of`: the agent's session whose turn this
        capture is (numbered in the same transaction as the proposal). `anew`: rejected hunks
        this capture may propose anew (the editor refused them, then allowed the same change: its
        text is going into the file), new hunks made for their repeats."""
        st = self.st
        store = st.require_store()
        limits = st.limits
        limits.check_id("proposalId", capture_id)
        if task_id is not None:
            limits.check_id("taskId", task_id)
        size = sum(len(t.encode("utf-8", "surrogatepass")) for t in now.values() if t)
        if size > limits.max_bytes:
            raise TooLarge(f"the capture carries {size} bytes of text; the limit is {limits.max_bytes}")
        changes = [self.proposing.normalized(c) for c in changes]
        existing = await store.proposal(capture_id)
        if existing is not None:
            if existing["edit_hash"] != edit_hash:
                raise Conflict(f"proposal {capture_id} already exists with a different change")
            await self.finish_open()  # a crash's journal: finished first, exactly once
        if on_disk is None:
            on_disk = now if in_place else bases
        else:
            in_place = False
        outcome: str = "replay"
        result: JSON | Captured | None = None
        async with st.op_lock, interprocess_lock(st.files_lock()):
            moved = await self._changed(on_disk)  # still as seen? (the agent may still be writing)
            if moved is not None and existing is None:
                raise Conflict(f"{st.ws.rel(moved)} changed while it was being captured: capture again")
            if moved is None:  # (else the capture was carried out meanwhile: a replay)
                outcome, result = await self._store(
                    capture_id,
                    changes,
                    bases,
                    now,
                    keep=keep,
                    in_place=in_place,
                    task_id=task_id,
                    agent=agent,
                    message=message,
                    edit_hash=edit_hash,
                    consume=consume,
                    cleanup=cleanup,
                    turn_of=turn_of,
                    anew=anew,
                )
                if isinstance(result, Captured):  # nothing new
                    return result
        await self.memory.sync()
        await self.finish_open()
        return await self._answer(capture_id, result if outcome == "again" and isinstance(result, dict) else None)

    async def _store(
        self,
        capture_id: str,
        changes: list[Change],
        bases: Mapping[str, str | None],
        now: Mapping[str, str | None],
        *,
        keep: bool,
        in_place: bool,
        task_id: str | None,
        agent: str | None,
        message: str | None,
        edit_hash: str,
        consume: tuple[str, list[str], list[str]] | None,
        cleanup: JSON | None,
        turn_of: str | None = None,
        anew: Collection[str] = (),
    ) -> tuple[str, JSON | Captured | None]:
        """Commit the proposal with its restore journal: ("new", None); ("nothing", the
        answer) when there is nothing new; ("replay", None) for a capture made before; ("again",
        its operation's result) for a new occurrence of one: the same capture once its journal
        is finished, while the files hold the agent's version once more (an agent run twice
        before anyone reviewed). Its journal is opened anew; nothing is proposed twice."""
        store = self.st.require_store()
        planned = self._plan(changes, bases, now)
        new = self._hunks(planned.hunks, capture_id, task_id, message, keep)
        if len(new) > self.st.limits.max_hunks:
            raise TooLarge(f"the capture makes {len(new)} hunks; the limit is {self.st.limits.max_hunks}")
        async with store.write() as tx:
            made = await tx.proposal(capture_id)
            again = None
            if made is not None:
                if made["edit_hash"] != edit_hash:
                    raise Conflict(f"proposal {capture_id} was stored meanwhile by another process")
                again = await sql.capture(tx, capture_id)
                if again is None or again.state != "done":
                    return "replay", None  # being carried out
            uris = {u for c in changes for u in (c.uri, getattr(c, "new_uri", None)) if u}
            prior = await self._prior(tx, task_id, uris)
            if again is not None:  # its own hunks are what it proposed before
                ids = {h.id for h in prior}
                prior += [h for h in await tx.hunks_where(proposal_id=capture_id) if h.id not in ids]
            proposable = [h for h in prior if not (h.status == Status.REJECTED and h.id in anew)]
            created, repeated, refused, stays, flagged = self._classify(new, proposable, keep)
            if keep:
                self._anchor_kept(new, created, kept_anchors(planned.hunks, bases, stays))
            superseded = await self._superseded(tx, prior, created, repeated, task_id, uris)
            restores = _restores(settle(planned.hunks, bases, stays) if in_place else {}, now)
            fresh_cleanup = cleanup is not None and (again is None or again.cleanup != cleanup)
            if not (created or restores or superseded or flagged):
                if again is None:
                    return "nothing", self._nothing_new(capture_id, repeated, refused)
                if not fresh_cleanup:
                    return "replay", None  # the same capture, and nothing in the files to do again
            result = {
                "hunkIds": [h.id for h in created],
                "superseded": [h.id for h in superseded],
                **({"repeated": [h.id for h in repeated]} if repeated else {}),
                **({"rejectedBefore": [h.id for h in refused]} if refused else {}),
            }
            files = sorted(planned.results)
            args = {"proposalId": capture_id, "taskId": task_id, "agent": agent, "keep": keep, "files": files}
            if again is None:
                lsn = await tx.log(f"propose/{capture_id}", "capture", args, result)
                await tx.add_proposal(capture_id, task_id, agent, message, edit_hash, edit_hash, lsn)
                await loop_sql.add_turn(tx, capture_id, turn_of)
            else:
                lsn = await tx.log(new_id("op-"), "capture", {**args, "again": True}, result)
            for h in flagged:  # its text is in the file now (kept), or taken out (not)
                h.kept, h.lsn, h.in_file = keep, lsn, None
            await record_hunks(tx, lsn, created, superseded, flagged)
            await (sql.add_capture if again is None else sql.reopen_capture)(tx, capture_id, lsn, restores, cleanup)
            if consume is not None:
                await sql.consume(tx, *consume)
        fault("capture:after-commit")
        return ("new", None) if again is None else ("again", result)

    def _plan(self, changes: list[Change], bases: Mapping[str, str | None], now: Mapping[str, str | None]) -> Plan:
        """The changes played over `bases`: they must give exactly what the agent wrote (`now`)."""
        try:
            planned = plan_proposal(changes, lambda uri, _version: bases.get(uri), exact=True)
        except BadProposal as exc:
            raise InvalidParams(f"the capture could not be turned into a proposal: {exc}") from None
        for uri, text in planned.results.items():
            if now.get(uri) != text:
                raise InvalidParams(f"the capture of {self.st.ws.rel(uri)} does not reproduce the file; nothing stored")
        return planned

    async def _superseded(
        self, tx: Tx, prior: list[Hunk], created: list[Hunk], repeated: list[Hunk], task_id: str | None, uris: set[str]
    ) -> list[Hunk]:
        """This review's kept hunks in these files that the capture did not repeat are part of
        what it proposes now (their text is in its baseline no more); and, in a task, the
        pending hunks its new ones replace."""
        superseded = [
            h
            for h in prior
            if h.kept and h.status in (Status.PENDING, Status.STALE) and h.task_id == task_id and h.uri in uris
            if h.id not in {r.id for r in repeated}
        ]
        if task_id is not None:
            ids = {h.id for h in superseded}
            superseded += [h for h in await self.proposing.superseded_by(tx, created, task_id) if h.id not in ids]
        return superseded

    @staticmethod
    def _hunks(
        planned: list[Planned], capture_id: str, task_id: str | None, message: str | None, keep: bool
    ) -> list[Hunk]:
        new = [p.hunk(new_id("h"), capture_id, seq, task_id, message, kept=keep) for seq, p in enumerate(planned)]
        if keep:
            # A kept rename is done in the files: the edits of the renamed file are where it is
            # now, as after an accepted rename (a reject moves them back with the file).
            moved = {p.uri: p.new_uri for p in planned if p.kind == Kind.RENAME and p.new_uri}
            for h in new:
                if h.kind == Kind.EDIT and h.uri in moved:
                    h.uri = moved[h.uri]
        return new

    @staticmethod
    def _anchor_kept(new: list[Hunk], created: list[Hunk], anchors: dict[int, tuple[int, Context, Context]]) -> None:
        """Kept hunks start where their new text is in the file the capture leaves, with the
        context that text gives them (domain/capture.kept_anchors)."""
        made = {id(h) for h in created}
        for i, h in enumerate(new):
            if i in anchors and id(h) in made:
                h.line, h.ctx_before, h.ctx_after = anchors[i]

    async def _changed(self, texts: Mapping[str, str | None]) -> str | None:
        """The first file that does not hold its text (None: no file), or None."""
        for uri, text in texts.items():
            if await asyncio.to_thread(self._digest_now, uri) != _hash(text):
                return uri
        return None

    def _digest_now(self, uri: str) -> str | None:
        try:
            # Over the limit (by its size, unread) it is not what the capture saw either.
            data = contents.read_regular(self.st.ws.resolve(uri), self.st.limits.max_bytes)
        except (contents.NotAFile, OSError, StetError):
            return "not a file"
        return None if data is None else digest(data)

    @staticmethod
    async def _prior(tx: Tx, task_id: str | None, uris: set[str]) -> list[Hunk]:
        """The task's hunks (all of them: repeats of any status count), else the kept pending
        hunks without a task in these files."""
        if task_id is not None:
            return await tx.hunks_where(task_id=task_id)
        out = []
        for uri in sorted(uris):
            found = await tx.hunks_where(uri=uri, statuses=[Status.PENDING, Status.STALE])
            out += [h for h in found if h.task_id is None and h.kept]
        return out

    @staticmethod
    def _classify(
        new: list[Hunk], prior: list[Hunk], keep: bool
    ) -> tuple[list[Hunk], list[Hunk], list[Hunk], list[bool], list[Hunk]]:
        """(hunks to create, earlier hunks repeated, earlier rejected hunks repeated, whether
        each planned hunk stays in the file, earlier hunks whose `kept` flag changes).

        A repeat of a live (or stale) hunk is not created again; a repeat of a rejected one neither, and
        its text does not stay in the file: the developer said no. With `keep` the rest stays
        where the agent wrote it; without, only what the developer has accepted stays."""
        live: dict[tuple[object, ...], list[Hunk]] = {}
        refused: dict[tuple[object, ...], list[Hunk]] = {}
        for h in sorted(prior, key=lambda h: (h.uri, h.line, h.seq)):
            # Stale counts too: an agent redoing a change in place hides the old text of the same
            # pending hunk from an editor's server while it works; the capture brings it back.
            if h.status in LIVE or h.status == Status.STALE:
                live.setdefault(same_change(h), []).append(h)
            elif h.status == Status.REJECTED:
                refused.setdefault(same_change(h), []).append(h)
        created, repeated, rejected, stays, flagged = [], [], [], [], []
        for h in new:
            key = same_change(h)
            if live.get(key):
                old = live[key].pop(0)
                repeated.append(old)
                stays.append(keep or old.status in (Status.ACCEPTED, Status.APPLIED))
                if old.status in (Status.PENDING, Status.STALE) and old.kept != keep:
                    flagged.append(old)  # its text is in the file now (keep), or no longer
            elif refused.get(key):
                rejected.append(refused[key].pop(0))
                stays.append(False)
            else:
                created.append(h)
                stays.append(keep)
        return created, repeated, rejected, stays, flagged

    def _nothing_new(self, capture_id: str, repeated: list[Hunk], refused: list[Hunk]) -> Captured:
        hunks = self.st.hunks
        return Captured(
            Proposed(
                None,
                already_proposed=tuple(hunks[h.id] for h in repeated if h.id in hunks),
                rejected_before=tuple(hunks[h.id] for h in refused if h.id in hunks),
            )
        )

    async def _answer(self, capture_id: str, again: JSON | None = None) -> Captured:
        """The capture's answer; `again`: the result of a new occurrence of it, whose hunks
        are the ones it created (usually none: the rest were proposed before)."""
        await self.memory.sync()
        async with self.st.require_store().read() as tx:
            row = await sql.capture(tx, capture_id)
        if again is None:
            proposed = self.proposing.answer(capture_id, await self._result(capture_id))
        else:
            proposed = self.proposing.answer(capture_id, again)
            made = set(again["hunkIds"])
            proposed = replace(
                proposed,
                hunks=tuple(h for h in proposed.hunks if h.id in made),
                rejected_before=tuple({h.id: h for h in proposed.rejected_before}.values()),
            )
        outcome = (row.outcome if row is not None else None) or {}
        return Captured(
            proposed,
            restored=tuple(self.st.ws.rel(u) for u in outcome.get("restored", [])),
            left=tuple(self.st.ws.rel(u) for u in outcome.get("left", [])),
        )

    async def _result(self, capture_id: str) -> JSON | None:
        op = await self.st.require_store().op(f"propose/{capture_id}")
        return op.result if op is not None else None

    async def withdraw(self, hunk_ids: list[str], why: str) -> list[Hunk]:
        """Kept hunks whose change never happened (the write that was to make it failed):
        superseded by one operation (`withdraw`, with why), their text not in the file. Nobody
        decided them: nothing is told of them, and the same change made again is recorded anew.
        Only pending or stale kept hunks move; returns those that did."""
        st = self.st
        async with st.op_lock, st.require_store().write() as tx:
            rows = await tx.hunks(hunk_ids)
            moving = [h for h in rows.values() if h.kept and h.status in (Status.PENDING, Status.STALE)]
            if not moving:
                return []
            lsn = await tx.log(new_id("withdraw-"), "withdraw", {"hunkIds": [h.id for h in moving], "why": why})
            await record_hunks(tx, lsn, [], moving)
        await self.memory.sync()
        return moving

    # --- the restore journal ---------------------------------------------------------------
    async def finish_open(self) -> int:
        """Carry out every capture's restore journal left open (by a crash); returns how many."""
        st = self.st
        store = st.require_store()
        async with store.read() as tx:
            pending = await sql.open_captures(tx)
        for row in pending:
            await self._finish(row)
        return len(pending)

    async def _finish(self, row: sql.CaptureRow) -> None:
        st = self.st
        restored: list[str] = []
        left: list[str] = []
        async with interprocess_lock(st.files_lock()):
            for item in row.restores:
                try:
                    path = st.ws.resolve(item["uri"])
                    result = await asyncio.to_thread(
                        contents.put,
                        path,
                        item["expect"],
                        item["text"],
                        st.ws.roots[0] if st.ws.roots else "/",
                        st.limits.max_bytes,
                    )
                except (StetError, OSError) as exc:
                    log.warning("cannot restore %s: %s", item["uri"], exc)
                    result = "left"
                if result == "done":
                    st.own_write(path, item["text"])
                (restored if result == "done" else left).append(item["uri"])
                fault("capture:after-restore")
        if row.cleanup and row.cleanup.get("worktree"):
            try:
                await asyncio.to_thread(git.remove_worktree, row.cleanup["repo"], row.cleanup["worktree"])
            except StetError as exc:
                log.warning("cannot remove the worktree %s: %s", row.cleanup["worktree"], exc)
        fault("capture:before-done")
        async with st.require_store().write() as tx:
            await sql.finish_capture(tx, row.id, {"restored": restored, "left": left})
        touched = {item["uri"] for item in row.restores}
        if touched:
            await self.outside.relocate_on_disk(touched)


def _hash(text: str | None) -> str | None:
    return None if text is None else digest(text.encode("utf-8"))
