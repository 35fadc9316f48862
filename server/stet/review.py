"""The review service: propose, decide, apply, recover. The one place where the rules meet.

Data flows one way: a request is validated against the store inside a write transaction,
the decision is committed, then its journaled effects are carried out (an edit in the
editor's buffer or an atomic write of the file), then the outcome is committed too.
Memory follows the store through `sync`, the same path for our own writes, for other
processes' writes and for recovery at start.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import secrets
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable, Protocol

from .domain.anchor import Anchors, LineIndex, at_with_context, locate, text_at
from .domain.document import Document
from .domain.effects import Verdict, classify
from .domain.hunks import apply_edits
from .domain.model import Hunk, lines_of
from .domain.proposal import Change, FileOp, TextChange, check_version
from .domain.proposal import plan as plan_proposal
from .domain.status import OPEN, Status, TransitionError, check, plan
from .domain.task import match_prior
from .domain.text import detect_eol, normalize_eol, split_lines, text_range
from .errors import Conflict, StetError, InvalidParams, StoreUnavailable, TooLarge, UnknownHunk
from . import fileops, process
from .faults import fault
from .store import EffectRow, Store
from .store.store import now_iso
from .workspace import Workspace, interprocess_lock, read_text, remove_temp_files, uri_to_path, write_atomic

log = logging.getLogger(__name__)

CONFIRM_TIMEOUT = 2.0  # seconds to wait for the editor to show an applied edit
APPLY_TIMEOUT = 10.0  # seconds to wait for the editor's answer to an edit
RETRY_DELAY = 0.3
IDLE_CHECKPOINT = 2.0
SETTLE_DELAY = 0.5
OUTSIDE_DEBOUNCE = 0.15  # a burst of file events (a checkout, an atomic save) is handled once


class Editor(Protocol):
    """What the review needs from the editor: apply an edit to an open buffer."""

    async def apply_edit(self, uri: str, version: int | None, edits: list[tuple[dict, str]], label: str) -> bool: ...


@dataclass
class Limits:
    max_bytes: int = 10 * 1024 * 1024
    max_hunks: int = 20_000
    max_id_length: int = 256


# A text edit of one file, as the CLI and the LSP layer hand it over.
FileEdit = TextChange


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(6)


def _canonical(c: Change) -> list:
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


def _sha(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class Review:
    def __init__(
        self,
        workspace: Workspace,
        editor: Editor,
        on_change: Callable[[set[str]], None],
        limits: Limits | None = None,
    ):
        self.ws = workspace
        self.editor = editor
        self.on_change = on_change
        self.limits = limits or Limits()
        self.store: Store | None = None
        self.store_error: StoreUnavailable | None = None
        self.hunks: dict[str, Hunk] = {}
        self.by_uri: dict[str, dict[str, Hunk]] = {}
        self.docs: dict[str, Document] = {}
        self.anchors: dict[str, Anchors] = {}
        self.client_uris: dict[str, str] = {}
        self.in_flight: set[str] = set()
        self.effect_uris: set[str] = set()  # uris with effects not finished yet
        self.seen_lsn = 0
        self.generation = 0  # bumped whenever hunks change in memory: cheap "anything new?" test
        self.ready = asyncio.Event()
        self.recovery_error: StetError | None = None
        self._op_lock = asyncio.Lock()
        self._sync_lock = asyncio.Lock()
        self._derive_lock = asyncio.Lock()
        self._derived: dict[str, tuple[Status, int, Status]] = {}
        self._doc_events: dict[str, asyncio.Event] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        self._outside: set[str] = set()
        self._own_writes: dict[str, str | None] = {}

    # --- plumbing ----------------------------------------------------------------------
    def _store(self) -> Store:
        if self.store is None:
            raise self.store_error or StoreUnavailable("the review store is not open yet")
        return self.store

    def _spawn(self, coro: Awaitable) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    def _later(self, key: str, delay: float, fn: Callable[[], Awaitable]) -> None:
        """Run `fn` once, `delay` seconds after the last call with this key (a debounce)."""
        old = self._timers.pop(key, None)
        if old:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay, lambda: (self._timers.pop(key, None), self._spawn(fn())))

    def uri_of(self, uri: str) -> str:
        return self.ws.normalize(uri)

    # --- memory follows the store -----------------------------------------------------------
    async def sync(self) -> set[str]:
        """Load every hunk changed since the last lsn seen; notify the uris concerned."""
        async with self._sync_lock:
            rows = await self._store().hunks_since(self.seen_lsn)
            changed: set[str] = set()
            derived: list[tuple[Hunk, Status]] = []
            indexes: dict[str, LineIndex] = {}  # one per open document for the whole batch
            for row in rows:
                derived.extend(self._merge(row, indexes))
                changed.add(row.uri)
                self.seen_lsn = max(self.seen_lsn, row.lsn)
            if rows:
                self.generation += 1
        if derived:
            self._derive(derived)
        if changed:
            self.on_change(changed)
        return changed

    def _merge(self, row: Hunk, indexes: dict[str, LineIndex]) -> list[tuple[Hunk, Status]]:
        old = self.hunks.get(row.id)
        doc = self.docs.get(row.uri)
        if old is None:
            row.stored_line = row.line
            row.shows_new = row.status == Status.APPLIED
            self.hunks[row.id] = row
            self.by_uri.setdefault(row.uri, {})[row.id] = row
            if doc is None:
                return []
            self.anchors[row.uri].put(row.id, row)
            return self._relocate(doc.lines, [row], self._index(indexes, row.uri, doc.lines))
        if row.uri != old.uri:  # its file was renamed
            self.by_uri.get(old.uri, {}).pop(old.id, None)
            if old.uri in self.anchors:
                self.anchors[old.uri].drop(old.id)
            old.uri = row.uri
            self.by_uri.setdefault(row.uri, {})[row.id] = old
            if doc is not None:
                self.anchors[row.uri].put(row.id, old)
        status_changed = old.status != row.status
        for name in ("status", "feedback", "version", "decided_at", "applied_text", "lsn", "message", "task_id"):
            setattr(old, name, getattr(row, name))
        old.stored_line = row.line
        if row.id in self.in_flight:
            return []
        if doc is None:
            old.line = row.line
            old.shows_new = row.status == Status.APPLIED
        elif status_changed and (row.status in (Status.PENDING, Status.STALE) or (row.status == Status.APPLIED) != old.shows_new):
            # The change may have been judged against other content (the file on disk while the
            # editor was re-opening it, another process): the open buffer is what counts.
            return self._relocate(doc.lines, [old], self._index(indexes, row.uri, doc.lines))
        return []

    @staticmethod
    def _index(indexes: dict[str, LineIndex], uri: str, lines: list[str]) -> LineIndex:
        # Building a document's index costs a pass over all its lines: hunks loaded in one
        # batch (thousands at a restart, when the editor re-opened the document first) share it.
        index = indexes.get(uri)
        if index is None:
            index = indexes[uri] = LineIndex(lines)
        return index

    def _relocate(
        self, lines: list[str] | None, hunks: Iterable[Hunk], index: LineIndex | None = None
    ) -> list[tuple[Hunk, Status]]:
        """Find each hunk's text in `lines` (None: the file does not exist); return the
        status changes that follow."""
        if index is None:
            index = LineIndex(lines) if lines is not None else None
        derived = []
        moved: list[tuple[int, int]] = []  # (old line, shift) of the texts found
        lost: list[Hunk] = []
        for h in hunks:
            if h.id in self.in_flight:
                continue
            if h.kind != "edit":
                if h.status in (Status.PENDING, Status.STALE):
                    ok = self._file_op_applicable(h, lines)
                    if ok and h.status == Status.STALE:
                        derived.append((h, Status.PENDING))
                    elif not ok and h.status == Status.PENDING:
                        derived.append((h, Status.STALE))
                continue
            if index is None:
                if h.status == Status.PENDING:
                    derived.append((h, Status.STALE))
                continue
            if h.status == Status.APPLIED:
                found = locate(index, h.replacement, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
                if found:
                    h.line, h.shows_new = found.line, True
                    continue
                found = locate(index, h.old, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
                if found:
                    h.line, h.shows_new = found.line, False
                continue
            found = locate(index, h.old, h.line, h.ctx_before, h.ctx_after)
            h.shows_new = False
            if found:
                moved.append((h.line, found.line - h.line))
                h.line = found.line
                if h.status == Status.STALE:
                    derived.append((h, Status.PENDING))
                continue
            lost.append(h)
            if h.status == Status.PENDING:
                derived.append((h, Status.STALE))
            # An accepted hunk always has a journaled effect: running it decides (applied or stale).
        # Where a text was not found, its last known place moves like its nearest neighbour above.
        moved.sort()
        for h in lost:
            shift = 0
            for line, delta in moved:
                if line > h.line:
                    break
                shift = delta
            h.line = max(0, h.line + shift)
        return derived

    def _file_op_applicable(self, h: Hunk, lines: list[str] | None) -> bool:
        text = None if lines is None else "".join(lines)
        target = False
        if h.kind == "rename" and h.new_uri:
            try:
                target = os.path.lexists(self.ws.resolve(h.new_uri))
            except Exception:
                return False
        return fileops.applicable(h.kind, text, h.old_text, h.new_text, target)

    def _derive(self, changes: list[tuple[Hunk, Status]]) -> None:
        """Queue status changes that follow from content; they are written with a
        compare-and-set, so a decision made meanwhile (here or elsewhere) wins."""
        for h, to in changes:
            self._derived[h.id] = (h.status, h.version, to)
        self._spawn(self._flush_derived())

    async def _flush_derived(self) -> None:
        async with self._derive_lock:
            if not self._derived or self.store is None:
                return
            items, self._derived = self._derived, {}
            async with self.store.write() as tx:
                rows = await tx.hunks(items)
                ok = []
                for hid, (frm, version, to) in items.items():
                    r = rows.get(hid)
                    if r is None or r.status != frm or r.version != version:
                        continue
                    try:
                        check(frm, to, hid)
                    except TransitionError:
                        continue
                    ok.append((r, to))
                if not ok:
                    return
                lsn = await tx.log(new_id("re-"), "reanchor", {"hunkIds": [r.id for r, _ in ok]})
                for r, to in ok:
                    r.status, r.version, r.lsn = to, r.version + 1, lsn
                    r.line = self.hunks[r.id].line if r.id in self.hunks else r.line
                    await tx.save_hunk(r)
        await self.sync()

    # --- queries ------------------------------------------------------------------------
    def list(self, uri=None, statuses=None, proposal_id=None, task_id=None) -> list[Hunk]:
        pool: Iterable[Hunk] = self.by_uri.get(uri, {}).values() if uri is not None else self.hunks.values()
        out = [
            h
            for h in pool
            if (statuses is None or h.status in statuses)
            and (proposal_id is None or h.proposal_id == proposal_id)
            and (task_id is None or h.task_id == task_id)
        ]
        out.sort(key=lambda h: (h.uri, h.line, h.proposal_id, h.seq))
        return out

    def open_hunks(self, uri: str) -> list[Hunk]:
        return [h for h in self.list(uri) if h.is_open]

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for h in self.hunks.values():
            counts[h.status.value] += 1
        return counts

    # --- proposals ----------------------------------------------------------------------
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
    ) -> dict:
        """Turn an agent's edit into pending hunks; the same proposal again adds nothing.

        Within a task, a hunk identical to one the task already has pending, accepted or
        applied is not created again, nor one identical to a rejected one (reported with the
        developer's feedback). `edit_hash` identifies the proposal's content for replays when
        the caller derived `changes` from the files as they are (a re-sent diff then replays
        even after the files moved on); `already_in` names hunks of the task the caller found
        already applied in what the agent re-sent (reported, not created)."""
        store = self._store()
        self._check_id("proposalId", proposal_id)
        if task_id is not None:
            self._check_id("taskId", task_id)
        size = sum(len(t.encode("utf-8", "surrogatepass")) for c in changes if isinstance(c, TextChange) for _, t in c.edits)
        if size > self.limits.max_bytes:
            raise TooLarge(f"the proposal carries {size} bytes of text; the limit is {self.limits.max_bytes}")
        changes = [self._normalized(c) for c in changes]  # refuses the whole proposal if any uri is outside
        edit_hash = edit_hash or _sha([_canonical(c) for c in changes])
        existing = await store.proposal(proposal_id)
        if existing is not None and existing["edit_hash"] == edit_hash:
            return self._proposal_answer(proposal_id, await self._propose_result(proposal_id))
        async with self._op_lock:
            texts = await self._texts({u for c in changes for u in (c.uri, getattr(c, "new_uri", None)) if u})

            def load(uri: str, version: int | None) -> str | None:
                doc = self.docs.get(uri)
                check_version(uri, version, doc.version if doc else None)
                return texts[uri]

            planned = plan_proposal(changes, load)
            result_hash = _sha(sorted(planned.results.items(), key=lambda kv: kv[0]))
            new_hunks = [
                Hunk(
                    id=new_id("h"),
                    proposal_id=proposal_id,
                    task_id=task_id,
                    seq=seq,
                    uri=p.uri,
                    kind=p.kind,
                    status=Status.PENDING,
                    line=p.spec.start,
                    old=p.spec.old,
                    new=p.spec.new,
                    ctx_before=p.spec.ctx_before,
                    ctx_after=p.spec.ctx_after,
                    new_uri=p.new_uri,
                    message=message,
                )
                for seq, p in enumerate(planned.hunks)
            ]
            if len(new_hunks) > self.limits.max_hunks:
                raise TooLarge(f"the proposal makes {len(new_hunks)} hunks; the limit is {self.limits.max_hunks}")
            async with store.write() as tx:
                existing = await tx.proposal(proposal_id)
                if existing is not None:
                    if existing["edit_hash"] != edit_hash and existing["result_hash"] != result_hash:
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
                    replaced = await self._superseded_by(tx, new_hunks, task_id)
                    result = {"hunkIds": [h.id for h in new_hunks], "superseded": [h.id for h in replaced], **extra}
                    lsn = await tx.log(
                        f"propose/{proposal_id}",
                        "propose",
                        {"proposalId": proposal_id, "taskId": task_id, "agent": agent, "files": sorted(planned.results)},
                        result,
                    )
                    await tx.add_proposal(proposal_id, task_id, agent, message, edit_hash, result_hash, lsn)
                    for h in new_hunks:
                        h.lsn = lsn
                    await tx.add_hunks(new_hunks)
                    for h in replaced:
                        h.status, h.version, h.lsn = Status.SUPERSEDED, h.version + 1, lsn
                        await tx.save_hunk(h)
            fault("propose:after-commit")
            await self.sync()
        return self._proposal_answer(proposal_id, result)

    async def _superseded_by(self, tx, new_hunks: list[Hunk], task_id: str | None) -> list[Hunk]:
        """Pending hunks of the same task whose old text a new hunk touches: the agent changed
        its mind about them. They are marked superseded, never merged with the new ones."""
        if task_id is None:
            return []
        older = await tx.hunks_where(task_id=task_id, statuses=[Status.PENDING])
        replaced = []
        for old in older:
            mem = self.hunks.get(old.id)
            line = mem.line if mem is not None else old.line
            for new in new_hunks:
                if new.uri != old.uri and not (new.kind == "rename" and old.uri == new.uri):
                    continue
                if old.kind != "edit" or new.kind != "edit" or _overlap(line, len(old.old), new.line, len(new.old)):
                    replaced.append(old)
                    break
        return replaced

    async def _propose_result(self, proposal_id: str) -> dict | None:
        op = await self._store().op(f"propose/{proposal_id}")
        return op.result if op is not None else None

    async def replay(self, proposal_id: str, edit_hash: str) -> dict | None:
        """The answer of a proposal already made with this content, else None."""
        existing = await self._store().proposal(proposal_id)
        if existing is None or existing["edit_hash"] != edit_hash:
            return None
        return self._proposal_answer(proposal_id, await self._propose_result(proposal_id))

    def _proposal_answer(self, proposal_id: str, result: dict | None = None) -> dict:
        """The proposal's hunks; with a task, also the earlier hunks of that task it repeated:
        `rejectedBefore` those the developer rejected (their feedback says why), including
        this proposal's own, and `alreadyProposed` the others, which were not created again."""
        hunks = sorted((h for h in self.hunks.values() if h.proposal_id == proposal_id), key=lambda h: h.seq)
        result = result or {}
        earlier = [self.hunks[i] for i in (*result.get("repeated", ()), *result.get("rejectedBefore", ())) if i in self.hunks]
        refused = [h for h in hunks if h.status == Status.REJECTED] + [h for h in earlier if h.status == Status.REJECTED]
        return {
            "proposalId": proposal_id,
            "hunks": [h.state() for h in hunks],
            "alreadyProposed": [h.state() for h in earlier if h.status != Status.REJECTED],
            "rejectedBefore": [h.state() for h in refused],
        }

    def _normalized(self, c: Change) -> Change:
        if isinstance(c, TextChange):
            return TextChange(self.uri_of(c.uri), c.version, c.edits)
        return FileOp(
            c.kind,
            self.uri_of(c.uri),
            self.uri_of(c.new_uri) if c.new_uri else None,
            c.overwrite,
            c.ignore_if_exists,
            c.ignore_if_not_exists,
        )

    async def _texts(self, uris: set[str]) -> dict[str, str | None]:
        """The current text of each uri: the open buffer, else the file (None: no such file)."""
        out: dict[str, str | None] = {}
        for uri in uris:
            doc = self.docs.get(uri)
            out[uri] = doc.text if doc is not None else await asyncio.to_thread(read_text, self.ws.resolve(uri))
        return out

    def _check_id(self, name: str, value: object) -> None:
        if not isinstance(value, str) or not value or len(value) > self.limits.max_id_length:
            raise InvalidParams(f"{name} must be a non-empty string of at most {self.limits.max_id_length} characters")

    # --- decisions ----------------------------------------------------------------------
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
        store = self._store()
        if request_id is not None:
            self._check_id("requestId", request_id)
        if text is not None and (hunk_ids is None or len(hunk_ids) != 1):
            raise InvalidParams("`text` (accept with changes) takes exactly one hunk id")
        op_id = request_id or new_id("op-")
        if uri is not None:
            uri = self.uri_of(uri)
        async with self._op_lock:
            effects: list[EffectRow] = []
            async with store.write() as tx:
                prior = await tx.op(op_id)
                if prior is not None:
                    ids = list(prior.args.get("hunkIds") or [])
                else:
                    if hunk_ids is not None:
                        ids = list(dict.fromkeys(hunk_ids))
                        rows = await tx.hunks(ids)
                        missing = [i for i in ids if i not in rows]
                        if missing:
                            raise UnknownHunk(f"unknown hunk id(s): {', '.join(missing)}", {"hunkIds": missing})
                    else:
                        wanted = [Status.PENDING] + ([Status.STALE] if action == "reject" else [])
                        found = await tx.hunks_where(
                            uri=uri, proposal_id=proposal_id, task_id=task_id, statuses=wanted
                        )
                        rows = {h.id: h for h in found}
                        ids = list(rows)
                    effects = await self._decide_in(tx, op_id, action, ids, rows, expected, feedback, text)
                    # Until its effect has run, memory keeps the hunk where the text really is.
                    for effect in effects:
                        self.in_flight.update(e["hunkId"] for e in effect.edits)
                        self.effect_uris.add(effect.uri)
            try:
                fault("decide:after-commit")
                await self.sync()
                for effect in effects:
                    await self._run_effect(effect)
            finally:
                for effect in effects:
                    self.in_flight.difference_update(e["hunkId"] for e in effect.edits)
        return [self.hunks[i].state() for i in ids if i in self.hunks]

    async def _decide_in(self, tx, op_id, action, ids, rows, expected, feedback, text) -> list[EffectRow]:
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
        args = {"hunkIds": ids}
        if feedback is not None:
            args["feedback"] = feedback
        if text is not None:
            args["text"] = text
        lsn = await tx.log(op_id, action, args)
        stamp = now_iso()
        for hid in targets:
            mem = self.hunks.get(hid)
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
        for hid, target in targets.items():
            h = rows[hid]
            h.status, h.version, h.lsn = target, h.version + 1, lsn
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
                target = "buffer" if uri in self.docs else "file"
                owner = process.token() if target == "buffer" else None
                eid = await tx.add_effect(lsn, uri, action_name, edits, target, owner)
                effects.append(EffectRow(eid, lsn, uri, action_name, edits, "pending", 0, target, owner))
        return effects

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
        mem = self.hunks.get(h.id, h)
        if h.kind != "edit":
            text = await self._current_text(h.uri)
            source = await asyncio.to_thread(os.path.lexists, self.ws.resolve(h.uri))
            target = bool(h.new_uri) and await asyncio.to_thread(os.path.lexists, self.ws.resolve(h.new_uri))
            if fileops.undoable(h.kind, text, "".join(mem.replacement), source, target):
                return
            raise Conflict(f"cannot undo hunk {h.id}: the file changed since the {h.kind} was applied", {"hunkId": h.id})
        lines = await self._current_lines(h.uri)
        if lines is not None:
            found = at_with_context(lines, mem.replacement, mem.line, h.ctx_before, h.ctx_after) or locate(
                LineIndex(lines), mem.replacement, mem.line, h.ctx_before, h.ctx_after, trust_hint=False
            )
            if found:
                return
        raise Conflict(f"cannot undo hunk {h.id}: its new text is no longer in {h.uri}", {"hunkId": h.id})

    async def _current_text(self, uri: str) -> str | None:
        doc = self.docs.get(uri)
        if doc is not None:
            return doc.text
        return await asyncio.to_thread(read_text, self.ws.resolve(uri))

    async def _current_lines(self, uri: str) -> list[str] | None:
        doc = self.docs.get(uri)
        if doc is not None:
            return doc.lines
        text = await asyncio.to_thread(read_text, self.ws.resolve(uri))
        return None if text is None else split_lines(text)

    # --- effects ------------------------------------------------------------------------
    async def _run_effect(self, effect: EffectRow) -> None:
        """Carry out one journaled effect, exactly once whatever happened before."""
        wanted = []
        for e in effect.edits:
            h = self.hunks.get(e["hunkId"])
            if h is None:
                continue
            if effect.action == "apply" and h.status != (Status.APPLIED if effect.state == "unsaved" else Status.ACCEPTED):
                continue  # decided otherwise since
            if effect.action == "revert" and h.status in (Status.ACCEPTED, Status.APPLIED) and effect.state != "unsaved":
                # Decided otherwise since - unless this revert lived in a buffer that was lost
                # unsaved: then every later edit of this file is replayed on the file too, in
                # order, and this one must come first.
                continue
            wanted.append((h, e))
        self.in_flight.update(h.id for h, _ in wanted)
        try:
            # Text edits first: a rename decided at the same time must move the edited file.
            edits = [(h, e) for h, e in wanted if h.kind == "edit"]
            files = [(h, e) for h, e in wanted if h.kind != "edit"]
            if edits and effect.uri in self.docs:
                results, complete, in_buffer = await self._effect_in_buffer(effect, edits)
            elif edits:
                results, complete, in_buffer = await self._effect_on_disk(effect, edits)
            else:
                results, complete, in_buffer = {}, True, False
            moves = []
            if files:
                async with interprocess_lock(self._files_lock()):
                    done, moves = await self._effect_on_files(effect, files)
                results.update(done)
            await self._finish_effect(effect, results, complete, in_buffer, moves)
        finally:
            self.in_flight.difference_update(h.id for h, _ in wanted)

    async def _effect_on_files(self, effect: EffectRow, wanted):
        """Create, delete or rename files; returns verdicts and the uri moves renames made."""
        results, moves = {}, []
        for h, e in wanted:
            path = self.ws.resolve(e["uri"])
            new_path = self.ws.resolve(e["newUri"]) if e.get("newUri") else None
            doc = self.docs.get(h.uri)
            if doc is not None and h.kind in ("delete", "rename") and effect.action == "apply":
                on_disk = await asyncio.to_thread(read_text, path)
                if on_disk != doc.text:  # the buffer holds unsaved work the operation would lose
                    results[h.id] = "stale"
                    continue
            # The journal's before/after are relative to the action; fileops wants the hunk's own.
            old_text, new_text = (e["before"], e["after"]) if effect.action == "apply" else (e["after"], e["before"])
            verdict = await asyncio.to_thread(fileops.settle, e["kind"], effect.action, path, new_path, old_text, new_text)
            results[h.id] = verdict
            for p in (path, new_path):
                if p:
                    self._own_write(p, await asyncio.to_thread(read_text, p))
            if verdict == "done":
                h.shows_new = effect.action == "apply"
                if h.kind == "rename":
                    pair = (e["uri"], e["newUri"]) if effect.action == "apply" else (e["newUri"], e["uri"])
                    moves.append((*pair, h.id))
        return results, moves

    def _plan_edits(self, lines: list[str], effect: EffectRow, wanted):
        """Classify each edit against the content; returns (line edits to make, verdicts)."""
        index = LineIndex(lines)
        edits, verdicts = [], {}
        for h, e in wanted:
            src, dst = lines_of(e["before"]), lines_of(e["after"])
            hint = h.line if h.uri in self.docs else e["line"]
            v = classify(lines, src, dst, hint, tuple(e["ctxBefore"]), tuple(e["ctxAfter"]), index)
            verdicts[h.id] = v
            if v.outcome == "apply":
                edits.append((v.line, src, dst, h))
        edits.sort(key=lambda x: x[0])
        kept, end = [], -1
        for ed in edits:  # two edits over the same lines cannot both apply
            if ed[0] < end:
                verdicts[ed[3].id] = Verdict("stale", ed[0])
                continue
            kept.append(ed)
            end = ed[0] + len(ed[1])
        return kept, verdicts

    @staticmethod
    def _positions_after(edits, line: int) -> int:
        """Where a line lands after the edits above it."""
        for start, src, dst, _ in edits:
            if start + len(src) <= line and not (start == line and not src):
                line += len(dst) - len(src)
        return line

    async def _effect_on_disk(self, effect: EffectRow, wanted):
        # Other processes (the CLI, other windows) write files too: read, check and write under
        # one lock they all share, or two edits to one file at once could lose one of them.
        async with interprocess_lock(self._files_lock()):
            return await self._effect_on_disk_locked(effect, wanted)

    def _files_lock(self) -> str:
        return os.path.join(os.path.dirname(self._store().path), "files.lock")

    async def _effect_on_disk_locked(self, effect: EffectRow, wanted):
        try:
            path = self.ws.resolve(effect.uri)
            text = await asyncio.to_thread(read_text, path)
        except StetError as exc:
            # No longer a text file of the workspace (binary, not UTF-8, a folder, a symlink
            # leading out): the text the edit expects is not there. Nothing is written.
            log.warning("cannot edit %s: %s", effect.uri, exc)
            text = None
        except OSError as exc:  # cannot be read now: the edit stays journaled, tried again later
            log.warning("cannot read %s now: %s", effect.uri, exc)
            return {}, False, False
        if text is None:
            return {h.id: "stale" for h, _ in wanted}, True, False
        lines = split_lines(text)
        edits, verdicts = self._plan_edits(lines, effect, wanted)
        if edits:
            new_lines = apply_edits(lines, [(s, src, dst) for s, src, dst, _ in edits])
            fault("effect:before-write")
            new_text = "".join(new_lines)
            self._own_write(path, new_text)
            try:
                await asyncio.to_thread(write_atomic, path, new_text)
            except OSError as exc:
                # A full disk, a read-only file system: the decision is stored, the edit stays
                # journaled and is tried again (at close, at the next start).
                log.warning("cannot write %s now: %s", path, exc)
                return {}, False, False
            fault("effect:after-write")
            for h in self.by_uri.get(effect.uri, {}).values():
                if h.id not in verdicts:
                    h.line = self._positions_after(edits, h.line)
        for h, _ in wanted:
            v = verdicts[h.id]
            if v.outcome == "stale":
                continue
            h.line = self._positions_after(edits, v.line)
            h.shows_new = effect.action == "apply"
        return {hid: ("stale" if v.outcome == "stale" else "done") for hid, v in verdicts.items()}, True, False

    async def _effect_in_buffer(self, effect: EffectRow, wanted):
        doc = self.docs[effect.uri]
        edits, verdicts = self._plan_edits(doc.lines, effect, wanted)
        results = {hid: "stale" for hid, v in verdicts.items() if v.outcome == "stale"}
        for h, _ in wanted:
            if verdicts[h.id].outcome == "done":
                h.line, h.shows_new = verdicts[h.id].line, effect.action == "apply"
                results[h.id] = "done"
        if not edits:
            return results, True, True
        expected = {ed[3].id: (self._positions_after(edits, ed[0]), ed[2], ed[3]) for ed in edits}
        lsp_edits = []
        for start, src, dst, _ in edits:
            (sl, sc), (el, ec) = text_range(doc.lines, start, len(src))
            rng = {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
            lsp_edits.append((rng, "".join(dst)))
        fault("effect:before-write")
        label = "Stet: apply accepted change" if effect.action == "apply" else "Stet: undo change"
        try:
            ok = await asyncio.wait_for(
                self.editor.apply_edit(self.client_uris.get(effect.uri, effect.uri), doc.version, lsp_edits, label),
                APPLY_TIMEOUT,
            )
        except (asyncio.TimeoutError, Exception) as exc:  # the editor failed us: retry later
            log.warning("applyEdit failed for %s: %s", effect.uri, exc)
            ok = False
        fault("effect:after-write")
        unconfirmed = []
        if ok:
            unconfirmed = await self._confirm_in_buffer(effect.uri, expected)
        else:
            unconfirmed = list(expected)
        for hid, (line, dst, h) in expected.items():
            if hid not in unconfirmed:
                results[hid] = "done"
                h.shows_new = effect.action == "apply"
        return results, not unconfirmed, True

    async def _confirm_in_buffer(self, uri: str, expected: dict) -> list[str]:
        """Wait until the buffer shows each edit (editors may answer before their didChange)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONFIRM_TIMEOUT
        pending = dict(expected)
        while True:
            doc = self.docs.get(uri)
            if doc is None:
                return list(pending)
            index = None
            for hid, (line, dst, h) in list(pending.items()):
                if at_with_context(doc.lines, dst, line, h.ctx_before, h.ctx_after):
                    h.line = line
                    del pending[hid]
                    continue
                index = index or LineIndex(doc.lines)
                found = locate(index, dst, line, h.ctx_before, h.ctx_after, trust_hint=False)
                if found:
                    h.line = found.line
                    del pending[hid]
            remaining = deadline - loop.time()
            if not pending or remaining <= 0:
                return list(pending)
            event = self._doc_events.setdefault(uri, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def _finish_effect(self, effect: EffectRow, results: dict[str, str], complete: bool, in_buffer: bool, moves=()):
        """Commit what the effect achieved: hunks applied or stale, files moved, the effect's state."""
        store = self._store()
        fault("effect:before-confirm")
        if complete:
            state = "unsaved" if in_buffer else "done"
        else:
            state = "pending"
        async with store.write() as tx:
            rows = await tx.hunks(results)
            changed = []
            for hid, result in results.items():
                r, mem = rows.get(hid), self.hunks.get(hid)
                if r is None or mem is None:
                    continue
                to = None
                if effect.action == "apply" and r.status == Status.ACCEPTED:
                    to = Status.APPLIED if result == "done" else Status.STALE
                elif effect.action == "apply" and effect.state == "unsaved" and result == "stale" and r.status == Status.APPLIED:
                    # Applied into a buffer that was lost unsaved, and the file no longer has the
                    # old text: the edit is not in the document and cannot be put back.
                    to = Status.STALE
                elif effect.action == "revert" and result == "stale" and r.status == Status.PENDING:
                    to = Status.STALE
                elif effect.action == "revert" and result == "done" and r.status == Status.STALE:
                    # Judged by content while its revert was still journaled (a buffer re-opened
                    # at restart): the old text is back now, so the hunk is found again.
                    to = Status.PENDING
                r.line = mem.line
                if to is not None:
                    r.status, r.version = to, r.version + 1
                    changed.append(r)
                else:
                    await tx.save_hunk(r)  # position only
            if changed or moves:
                lsn = await tx.log(new_id("fx-"), "effect", {"effect": effect.id, "hunkIds": [r.id for r in changed]})
                for r in changed:
                    r.lsn = lsn
                    await tx.save_hunk(r)
                for old_uri, new_uri, rename_id in moves:
                    # The file moved: its hunks follow it (the rename hunk keeps its own uri).
                    await tx.move_hunks(old_uri, new_uri, lsn, rename_id)
            # An edit now living in this window's unsaved buffer is this process's to settle.
            owner = process.token() if state == "unsaved" else None
            await tx.set_effect(effect.id, state, effect.attempts + (0 if complete else 1), owner)
            # The edit moved the file's other hunks: record where, in the same commit, so a crash
            # right after does not leave them with stale positions (repeated lines could mislead).
            moved = [
                (h.line, h.id)
                for h in self.by_uri.get(effect.uri, {}).values()
                if h.id not in results and h.line != h.stored_line
            ]
            if moved:
                await tx.save_lines(moved)
        effect.state = state
        fault("effect:after-confirm")
        for hid in results:
            if hid in self.hunks:
                self.hunks[hid].stored_line = self.hunks[hid].line
        for line, hid in moved:
            if hid in self.hunks:
                self.hunks[hid].stored_line = line
        if complete and effect.uri in self.effect_uris:
            if not await store.has_pending_effect(effect.uri):
                self.effect_uris.discard(effect.uri)
        await self.sync()
        self.on_change({effect.uri, *(m[1] for m in moves)})

    async def run_pending_effects(self, uri: str | None = None, states=("pending", "unsaved"), targets=("file", "buffer")) -> None:
        store = self._store()
        async with self._op_lock:
            for effect in await store.open_effects():
                if (uri is None or effect.uri == uri) and effect.state in states and effect.target in targets:
                    if effect.state == "unsaved" and effect.uri in self.docs:
                        continue  # the buffer holds it; settled at save, close or restart
                    if (effect.state == "unsaved" or effect.target == "buffer") and self._held_elsewhere(effect):
                        continue  # another live window's buffer holds it: that window settles it
                    await self._run_effect(effect)
                    fault("recover:after-effect")

    @staticmethod
    def _held_elsewhere(effect: EffectRow) -> bool:
        return bool(effect.owner) and effect.owner != process.token() and process.alive(effect.owner)

    # --- the editor's documents ---------------------------------------------------------
    def opened(self, client_uri: str, text: str, version: int | None) -> None:
        try:
            uri = self.uri_of(client_uri)
        except Exception:
            return  # not ours to review
        doc = Document(uri, text, version)
        self.docs[uri] = doc
        self.client_uris[uri] = client_uri
        anchors = Anchors()
        self.anchors[uri] = anchors
        hunks = list(self.by_uri.get(uri, {}).values())
        for h in hunks:
            anchors.put(h.id, h)
        derived = self._relocate(doc.lines, hunks)
        if derived:
            self._derive(derived)
        self._signal(uri)
        if hunks:
            self.on_change({uri})
        if uri in self.effect_uris:
            self._later(f"retry:{uri}", RETRY_DELAY, lambda: self._retry(uri))

    def changed(self, client_uri: str, version: int | None, changes: list[tuple[dict | None, str]]) -> None:
        uri = self._known(client_uri)
        if uri is None:
            return
        doc = self.docs[uri]
        doc.version = version
        anchors = self.anchors[uri]
        touched: set[str] = set()
        full = False
        for rng, text in changes:
            edit = doc.apply_change(rng, text)
            if edit is None:
                full = True
            elif len(anchors):
                touched |= anchors.apply(edit)
        if full:
            derived = self._relocate(doc.lines, list(self.by_uri.get(uri, {}).values()))
        else:
            derived = self._verify(doc.lines, touched)
        if derived:
            self._derive(derived)
        self._signal(uri)
        if len(anchors):
            self._later(f"publish:{uri}", 0.1, lambda: self._publish(uri))
            self._later("checkpoint", IDLE_CHECKPOINT, self.checkpoint)
        if uri in self.effect_uris:
            self._later(f"retry:{uri}", RETRY_DELAY, lambda: self._retry(uri))

    def _verify(self, lines: list[str], touched: set[str]) -> list[tuple[Hunk, Status]]:
        derived = []
        for hid in touched:
            h = self.hunks.get(hid)
            if h is None or hid in self.in_flight or h.status not in OPEN:
                continue
            if h.kind != "edit":
                derived.extend(self._relocate(lines, [h]))
                continue
            there = (
                text_at(lines, h.old, h.line)
                if h.old
                else at_with_context(lines, h.old, h.line, h.ctx_before, h.ctx_after)
            )
            if h.status == Status.STALE and there:
                derived.append((h, Status.PENDING))
            elif h.status != Status.STALE and not there:
                derived.append((h, Status.STALE))
        return derived

    async def _publish(self, uri: str) -> None:
        self.on_change({uri})

    def _signal(self, uri: str) -> None:
        event = self._doc_events.pop(uri, None)
        if event is not None:
            event.set()

    def _known(self, client_uri: str) -> str | None:
        try:
            uri = self.uri_of(client_uri)
        except Exception:
            return None
        return uri if uri in self.docs else None

    async def _retry(self, uri: str) -> None:
        if self.store is not None and self.ready.is_set():
            await self.run_pending_effects(uri, states=("pending",))

    async def saved(self, client_uri: str) -> None:
        uri = self._known(client_uri)
        if uri is None or self.store is None:
            return
        async with self.store.write() as tx:
            await tx.conn.execute("UPDATE effects SET state = 'done' WHERE uri = ? AND state = 'unsaved'", (uri,))
        await self.checkpoint({uri})

    async def closed(self, client_uri: str) -> None:
        uri = self._known(client_uri)
        if uri is None:
            return
        self.docs.pop(uri, None)
        self.anchors.pop(uri, None)
        self.client_uris.pop(uri, None)
        self._signal(uri)
        if self.store is None:
            return
        # The buffer is gone: what it held of accepted work must reach the file.
        await self.run_pending_effects(uri)
        await self._relocate_on_disk({uri})

    # --- changes made outside the editor --------------------------------------------------
    def _own_write(self, path: str, text: str | None) -> None:
        """Remember what Stet itself wrote, so the watcher does not take it for an outside change."""
        self._own_writes[path] = None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def outside_changed(self, uris: Iterable[str]) -> None:
        """Files changed on disk (a checkout, another tool, the agent): re-anchor their hunks."""
        for uri in uris:
            if uri in self.by_uri or uri in self._rename_targets():
                self._outside.add(uri)
        if self._outside:
            self._later("outside", OUTSIDE_DEBOUNCE, self._flush_outside)

    def folders_to_watch(self) -> set[str]:
        """Folders holding files (or rename targets) with open hunks."""
        folders = set()
        for uri, hunks in self.by_uri.items():
            for h in hunks.values():
                if h.status in OPEN:
                    for u in (uri, h.new_uri):
                        if u:
                            try:
                                folders.add(os.path.dirname(uri_to_path(u)))  # stored uris are already real paths
                            except StetError:
                                continue
                    break
        return folders

    def _rename_targets(self) -> dict[str, str]:
        return {h.new_uri: h.uri for h in self.hunks.values() if h.new_uri and h.status in OPEN}

    async def _flush_outside(self) -> None:
        uris, self._outside = self._outside, set()
        if self.store is None or not self.ready.is_set():
            return
        targets = self._rename_targets()
        todo = set()
        for uri in uris:
            if uri in targets:
                todo.add(targets[uri])
            if uri in self.docs:
                continue  # the editor's buffer is what counts while it is open
            try:
                path = self.ws.resolve(uri)
                text = await asyncio.to_thread(read_text, path)
            except Exception:
                todo.add(uri)
                continue
            digest = None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            if path in self._own_writes and self._own_writes[path] == digest:
                continue  # what we wrote ourselves
            todo.add(uri)
        if todo:
            await self._relocate_on_disk(todo)

    async def _relocate_on_disk(self, uris: Iterable[str]) -> None:
        derived = []
        for uri in uris:
            hunks = [h for h in self.by_uri.get(uri, {}).values() if h.status in OPEN]
            if not hunks or uri in self.docs:
                continue
            try:
                text = await asyncio.to_thread(read_text, self.ws.resolve(uri))
            except Exception as exc:  # unreadable now: treat like a missing file
                log.warning("cannot read %s: %s", uri, exc)
                text = None
            derived.extend(self._relocate(None if text is None else split_lines(text), hunks))
        if derived:
            self._derive(derived)
            await self._flush_derived()
        self.on_change(set(uris))

    # --- checkpoints and recovery -------------------------------------------------------
    async def checkpoint(self, uris: set[str] | None = None) -> int:
        """Persist anchor positions that moved since the last checkpoint."""
        if self.store is None:
            return 0
        moved = [
            (h.line, h.id)
            for uri in (uris if uris is not None else list(self.by_uri))
            for h in self.by_uri.get(uri, {}).values()
            if h.line != h.stored_line
        ]
        if moved:
            await self.store.save_lines(moved)
            for line, hid in moved:
                if hid in self.hunks:
                    self.hunks[hid].stored_line = line
        return len(moved)

    async def recover(self) -> dict:
        """Bring memory, files and store into agreement after a start; safe to interrupt.

        Whatever happens, requests are let through afterwards: when recovery failed they
        are answered with its error (see `recovery_error`), never left waiting."""
        try:
            return await self._recover()
        except BaseException as exc:
            self.recovery_error = exc if isinstance(exc, StetError) else StoreUnavailable(
                f"Stet could not restore the review: {exc!r}. Restart Stet; `stet doctor` explains more."
            )
            self.ready.set()
            raise

    async def _recover(self) -> dict:
        loop = asyncio.get_running_loop()
        started = loop.time()
        fault("recover:start")
        store = self._store()
        await self.sync()
        folders = set()
        for uri in self.by_uri:
            try:
                folders.add(os.path.dirname(self.ws.resolve(uri)))
            except Exception:
                continue
        # Under the files lock: a temp file of another process's write in progress is not a leftover.
        async with interprocess_lock(self._files_lock()):
            await asyncio.to_thread(remove_temp_files, folders)
        effects = await store.open_effects()
        self.effect_uris.update(e.uri for e in effects if e.state == "pending")
        await self.run_pending_effects(states=("pending",), targets=("file",))
        await self._relocate_on_disk([u for u in self.by_uri if u not in self.docs])
        fault("recover:after-relocate")
        await self.checkpoint()
        self.ready.set()
        if any(e.state == "unsaved" or e.target == "buffer" for e in effects):
            # Edits meant for (or living in) an editor's buffer: if the editor is still there it
            # re-opens its buffers right after start; give it a moment, then settle what is left
            # in the buffer if it came back, else on disk.
            self._later("settle-buffers", SETTLE_DELAY, self._settle_buffers)
        counts = self.counts()
        files = len({h.uri for h in self.hunks.values() if h.is_open})
        return {"files": files, "counts": counts, "durationMs": round((loop.time() - started) * 1000, 1)}

    async def _settle_buffers(self) -> None:
        await self.run_pending_effects(states=("pending", "unsaved"), targets=("buffer",))
        await self.run_pending_effects(states=("unsaved",), targets=("file",))

    async def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()
        if self.store is not None:
            try:
                await self.checkpoint()
            except Exception as exc:
                log.warning("checkpoint at shutdown failed: %s", exc)
            await self.store.close()
            self.store = None
