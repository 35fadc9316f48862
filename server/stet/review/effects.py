"""Effects: carry out a journaled edit exactly once, in the editor's buffer or on disk, and
record the outcome; the text found decides (done, apply, or stale)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..domain.anchor import LineIndex, at_with_context, locate, text_at
from ..domain.effect_outcome import Action, EffectEdit, Found, State, outcome, settled, still_wanted
from ..domain.hunks import CONTEXT, Context, Lines, Shifts, apply_edits, context_around, edit_order
from ..domain.model import Hunk, Kind, lines_of
from ..domain.neighbours import Neighbour, Written, refreshed_contexts
from ..domain.shapes import Range
from ..domain.status import Status
from ..domain.text import split_lines, text_range
from ..domain.verdict import Verdict, classify
from ..errors import StetError, StoreUnavailable
from ..faults import fault
from ..store import EffectRow as EffectRow  # (re-exported: the doctor names it)
from ..workspace import fileops, owners, safe
from ..workspace.files import decode_text, read_text
from ..workspace.locks import interprocess_lock
from .config import APPLY_TIMEOUT, CONFIRM_TIMEOUT, new_id
from .memory import Memory
from .stamps import Stamp, text_hash
from .state import ReviewState

log = logging.getLogger(__name__)

# (hunk, journal entry) pairs an effect still has to carry out
Wanted = list[tuple[Hunk, EffectEdit]]
# (first line, old lines, new lines, hunk) of an edit to make
LineEdit = tuple[int, Lines, Lines, Hunk]
# hunk id -> (the line its text should start at, that text, the hunk, the lines around it once
# the effect's edits are made): what an edit must show
Expected = dict[str, tuple[int, Lines, Hunk, Context, Context]]


@dataclass
class Why:
    """What stood in an effect's way, for the developer: per stale hunk, and for the whole
    effect when it waits to be tried again (a full disk)."""

    stale: dict[str, str] = field(default_factory=dict)
    waiting: str | None = None


def _said(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what


def _text_or_none(path: str) -> str | None:
    try:
        return read_text(path)
    except (StetError, OSError):
        return None


class Effects:
    """The effect runner."""

    def __init__(self, state: ReviewState, memory: Memory):
        self.st = state
        self.memory = memory
        # effect id -> the stamp of the file it just wrote (recorded with its outcome)
        self._written: dict[int, Stamp] = {}
        # uri -> the buffer version an edit was sent against and taken, but not reported yet
        self._unreported: dict[str, int | None] = {}
        # effect id -> the contexts of hunks next to what it wrote, taken again from the text
        # (recorded with its outcome)
        self._contexts: dict[int, dict[str, tuple[Context, Context]]] = {}

    async def run(self, effect: EffectRow) -> None:
        """Carry out one journaled effect, exactly once whatever happened before."""
        st = self.st
        if effect.lsn > st.seen_lsn:
            # Decided by another process after this one last looked: judged against a stale
            # memory, the hunk would seem undecided and its edit be closed as history.
            await self.memory.sync()
        wanted: Wanted = []
        # A later decision about the same hunk already carried out on the file (a revert or an
        # apply replayed from a lost buffer would undo it): this edit is history, not work.
        # (Nothing later than this effect's own decision seen yet: no such decision to look for,
        # and an accept spares a hop to SQLite's thread.)
        superseded = await st.require_store().hunks_done_after(effect.lsn) if st.seen_lsn > effect.lsn else set()
        for e in effect.edits:
            h = st.hunks.get(e["hunkId"])
            if h is None or h.id in superseded:
                continue
            if still_wanted(effect.action, effect.state, h.status):
                wanted.append((h, e))
        st.in_flight.update(h.id for h, _ in wanted)
        why = Why()
        try:
            # Text edits first: a rename decided at the same time must move the edited file.
            edits = [(h, e) for h, e in wanted if h.kind == Kind.EDIT]
            files = [(h, e) for h, e in wanted if h.kind != Kind.EDIT]
            results: dict[str, str]
            if edits and effect.uri in st.open:
                results, complete, in_buffer = await self._in_buffer(effect, edits)
            elif edits:
                # Run again after a crash, the rename of this same effect may already have moved
                # the file: its edits are then checked (and made) where the file is now.
                where = await asyncio.to_thread(self._moved_by, effect, files)
                results, complete, in_buffer = await self._on_disk(effect, edits, why, where)
                written = [(h, e) for h, e in edits if results.get(h.id) == "done"]
                if complete and written and where is None and effect.uri in st.open:
                    # The editor opened the file while Stet wrote it: its buffer (read before the
                    # write, or after) is the document now, and must show the edit too.
                    shown, complete, in_buffer = await self._in_buffer(effect, written)
                    results.update(shown)
            else:
                results, complete, in_buffer = {}, True, False
            moves: list[tuple[str, str, str]] = []
            if files:
                async with interprocess_lock(st.files_lock()):
                    done, moves, files_complete = await self._on_files(effect, files, why)
                results.update(done)
                complete = complete and files_complete
            await self._finish(effect, results, complete, in_buffer, moves, why)
        finally:
            st.settle(h.id for h, _ in wanted)

    async def _on_files(
        self, effect: EffectRow, wanted: Wanted, why: Why
    ) -> tuple[dict[str, str], list[tuple[str, str, str]], bool]:
        """Create, delete or rename files; returns verdicts, the uri moves renames made, and
        whether every operation was settled (False: one waits to be tried again)."""
        st = self.st
        results: dict[str, str] = {}
        moves: list[tuple[str, str, str]] = []
        complete = True
        for h, e in wanted:
            path = new_path = None
            try:
                path = st.ws.path_of(e["uri"])
                new_uri = e.get("newUri")
                new_path = st.ws.path_of(new_uri) if new_uri else None
                doc = st.doc(h.uri)
                if doc is not None and h.kind in (Kind.DELETE, Kind.RENAME) and effect.action != Action.REVERT:
                    on_disk = await asyncio.to_thread(read_text, path)
                    if on_disk != doc.text:  # the buffer holds unsaved work the operation would lose
                        results[h.id] = "stale"
                        why.stale[h.id] = (
                            "the editor's buffer holds unsaved work the operation would lose: save it first"
                        )
                        continue
                # The journal's before/after are relative to the action; fileops wants the hunk's own.
                applying = effect.action != Action.REVERT
                old_text, new_text = (e["before"], e["after"]) if applying else (e["after"], e["before"])
                verdict, reason = await asyncio.to_thread(
                    fileops.settle, e["kind"], "apply" if applying else "revert", path, new_path, old_text, new_text
                )
            except StetError as exc:  # a path Stet no longer takes (outside, .git, a symlink, not a file)
                verdict, reason = "stale", exc.message
            except OSError as exc:  # a full disk, a read-only file system: tried again later
                log.warning("%s %s %s waits: %s", effect.action, h.kind, e["uri"], exc)
                why.waiting = f"waiting to be carried out: {_said(exc)}"
                complete = False
                continue
            results[h.id] = verdict
            if reason:
                why.stale[h.id] = reason
            for p in (path, new_path):
                if p:
                    st.own_write(p, await asyncio.to_thread(_text_or_none, p))
            if verdict == "done":
                h.shows_new = applying
                if h.kind == Kind.RENAME:
                    pair = (e["uri"], e["newUri"]) if applying else (e["newUri"], e["uri"])
                    moves.append((*pair, h.id))
        return results, moves, complete

    def _plan_edits(
        self, lines: list[str], wanted: Wanted, from_lost_buffer: bool = False
    ) -> tuple[list[LineEdit], dict[str, Verdict], dict[str, int]]:
        """Classify each edit against the content; returns (line edits to make, in
        `edit_order`, verdicts, and for each hunk an edit makes: that edit's index).
        `from_lost_buffer`: edits of a buffer gone unsaved, made on the file instead."""
        index = LineIndex(lines)
        edits: list[LineEdit] = []
        verdicts: dict[str, Verdict] = {}
        for h, e in wanted:
            src, dst = lines_of(e["before"]), lines_of(e["after"])
            open_here = h.uri in self.st.open
            hint = h.line if open_here else e["line"]
            v = classify(
                lines,
                src,
                dst,
                hint,
                tuple(e["ctxBefore"]),
                tuple(e["ctxAfter"]),
                index,
                tracked=open_here and h.tracked,
                from_lost_buffer=from_lost_buffer,
            )
            verdicts[h.id] = v
            if v.outcome == "apply":
                edits.append((v.line, src, dst, h))
        # An insertion goes above a change starting at its line, as `apply_edits` makes them
        # (by start alone, the change first, the insertion looked like an overlap: stale).
        edits.sort(key=lambda ed: edit_order(ed[:3]))
        kept: list[LineEdit] = []
        made_by: dict[str, int] = {}
        end = -1
        for ed in edits:  # two edits over the same lines cannot both apply
            if kept and ed[:3] == kept[-1][:3]:
                # The very same change twice (one patch proposed under two tasks): made once,
                # and both hunks are what it made.
                verdicts[ed[3].id] = Verdict("done", ed[0])
                made_by[ed[3].id] = len(kept) - 1
                continue
            if ed[0] < end:
                verdicts[ed[3].id] = Verdict("stale", ed[0])
                continue
            made_by[ed[3].id] = len(kept)
            kept.append(ed)
            end = ed[0] + len(ed[1])
        return kept, verdicts, made_by

    async def _on_disk(
        self, effect: EffectRow, wanted: Wanted, why: Why, where: str | None = None
    ) -> tuple[dict[str, str], bool, bool]:
        # Other processes (the CLI, other windows) write files too: read, check and write under
        # one lock they all share, or two edits to one file at once could lose one of them.
        async with interprocess_lock(self.st.files_lock()):
            for attempt in range(3):
                try:
                    return await self._on_disk_locked(effect, wanted, why, where)
                except safe.Replaced:
                    # Another program saved the file (a new file put in its place) between the
                    # read and the write: nothing was written; read it again and decide again.
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

    def _moved_by(self, effect: EffectRow, files: Wanted) -> str | None:
        """The uri an apply effect's own rename already moved its file to (None: not moved)."""
        for _, e in files:
            if (
                effect.action == Action.APPLY
                and e["kind"] == Kind.RENAME
                and e["uri"] == effect.uri
                and (moved := e.get("newUri"))
            ):
                try:
                    src, dst = self.st.ws.path_of(e["uri"]), self.st.ws.path_of(moved)
                except StetError:
                    return None
                if not safe.exists(src) and safe.exists(dst):
                    return moved
        return None

    async def _on_disk_locked(
        self, effect: EffectRow, wanted: Wanted, why: Why, where: str | None = None
    ) -> tuple[dict[str, str], bool, bool]:
        st = self.st
        try:
            path = st.ws.path_of(where or effect.uri)
            found = await asyncio.to_thread(safe.read_file_identified, path)
            text = None if found is None else decode_text(found[0], path)
        except StetError as exc:
            # No longer a text file of the workspace (binary, not UTF-8, a folder, a FIFO, a
            # symlink on the way): the text the edit expects is not there. Nothing is written.
            log.warning("cannot edit %s: %s", effect.uri, exc)
            why.stale.update({h.id: exc.message for h, _ in wanted})
            return {h.id: "stale" for h, _ in wanted}, True, False
        except OSError as exc:
            if safe.is_transient(exc):  # cannot be read now: the edit stays journaled, tried again later
                log.warning("cannot read %s now: %s", effect.uri, exc)
                why.waiting = f"waiting to be written: {_said(exc)}"
                return {}, False, False
            why.stale.update({h.id: _said(exc) for h, _ in wanted})
            return {h.id: "stale" for h, _ in wanted}, True, False
        if text is None:
            return {h.id: "stale" for h, _ in wanted}, True, False
        lines = split_lines(text)
        overlapped: list[Hunk] = []
        edits, verdicts, made_by = self._plan_edits(lines, wanted, from_lost_buffer=self._of_a_lost_buffer(effect))
        shifts = Shifts([(s, src, dst) for s, src, dst, _ in edits])
        if edits:
            new_lines = apply_edits(lines, [(s, src, dst) for s, src, dst, _ in edits])
            fault("effect:before-write")
            new_text = "".join(new_lines)
            st.own_write(path, new_text)
            try:
                assert found is not None
                size, mtime = await asyncio.to_thread(safe.write_file, path, new_text.encode("utf-8"), expect=found[1])
            except safe.Replaced:
                raise
            except StetError as exc:  # a symlink or a FIFO put in its place, a hard link: nothing written
                log.warning("cannot write %s: %s", path, exc)
                why.stale.update({h.id: exc.message for h, _ in wanted})
                return {h.id: "stale" for h, _ in wanted}, True, False
            except OSError as exc:
                if not safe.is_transient(exc):
                    why.stale.update({h.id: _said(exc) for h, _ in wanted})
                    return {h.id: "stale" for h, _ in wanted}, True, False
                # A full disk, a read-only file system: the decision is stored, the edit stays
                # journaled and is tried again (when the file next changes, at the next start).
                log.warning("cannot write %s now: %s", path, exc)
                why.waiting = f"waiting to be written: {_said(exc)}"
                return {}, False, False
            fault("effect:after-write")
            others = [h for h in st.by_uri.get(effect.uri, {}).values() if h.id not in verdicts]
            # Another hunk over or next to the lines just changed (a change proposed twice, an
            # overlapping proposal) is judged again against what the file now says: the rest
            # of the file is as it was, its hunks only move.
            overlapped = [h for h in others if h.id not in st.in_flight and shifts.touch(h.line, h.anchored_length())]
            for h in others:
                h.line = shifts.after(h.line)
            if where is None:
                # Every hunk of the file is judged against this content: the next process to
                # open the store need not read it again (see recheck).
                self._written[effect.id] = (effect.uri, size, mtime, text_hash(new_text))
        for h, _ in wanted:
            v = verdicts[h.id]
            if v.outcome == "stale":
                continue
            # Its edit's lines land below those inserted at the same line before them; a text
            # there already moves like the other hunks.
            h.line = shifts.landed(made_by[h.id]) if h.id in made_by else shifts.after(v.line)
            h.shows_new = effect.action != Action.REVERT
        done = [(h, e) for h, e in wanted if verdicts[h.id].outcome != "stale"]
        self._refresh_neighbours(effect, new_lines if edits else lines, done, wanted)
        if overlapped:
            # Judged after the contexts are taken again: a hunk right next to the lines just
            # written is found by the text around it now, not by the lines this edit removed.
            derived = self.memory.relocate(new_lines, overlapped)
            if derived:
                self.memory.derive(derived)
        return {hid: ("stale" if v.outcome == "stale" else "done") for hid, v in verdicts.items()}, True, False

    @staticmethod
    def _of_a_lost_buffer(effect: EffectRow) -> bool:
        """Made in (or meant for) an editor's buffer, and now made on the file: that buffer is gone."""
        return effect.state == State.UNSAVED or effect.target == "buffer"

    async def _in_buffer(self, effect: EffectRow, wanted: Wanted) -> tuple[dict[str, str], bool, bool]:
        st = self.st
        doc = st.open[effect.uri].doc
        edits, verdicts, made_by = self._plan_edits(doc.lines, wanted)
        results = {hid: "stale" for hid, v in verdicts.items() if v.outcome == "stale"}
        for h, _ in wanted:
            if verdicts[h.id].outcome == "done":
                h.line, h.shows_new = verdicts[h.id].line, effect.action != Action.REVERT
                results[h.id] = "done"
        if not edits:
            self._refresh_buffer_neighbours(effect, wanted, results)
            return results, True, True
        shifts = Shifts([(s, src, dst) for s, src, dst, _ in edits])
        # What the buffer shows once the editor made them: each edit's lines where they land,
        # between the lines it will have around it (a deletion next to another edit of this
        # effect has that edit's new text beside it, not the text journaled before).
        made = apply_edits(doc.lines, [(s, src, dst) for s, src, dst, _ in edits])
        hunks = {h.id: h for h, _ in wanted}
        expected: Expected = {}
        for hid, k in made_by.items():
            at, dst = shifts.landed(k), edits[k][2]
            expected[hid] = (at, dst, hunks[hid], *context_around(made, at, at + len(dst)))
        lsp_edits = []
        for start, src, dst, _ in edits:
            (sl, sc), (el, ec) = text_range(doc.lines, start, len(src))
            rng = {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
            lsp_edits.append((rng, "".join(dst)))
        if doc.version is not None and self._unreported.get(effect.uri) == doc.version:
            # The editor took an edit at this very version and has not reported it yet (no
            # didChange since): sending it again could make it twice. Wait for the report.
            taken, unconfirmed = True, await self._confirm_in_buffer(effect.uri, expected)
        else:
            taken, unconfirmed = await self._send(effect, doc.version, lsp_edits, expected)
        if taken and unconfirmed:
            self._unreported[effect.uri] = doc.version
        else:
            self._unreported.pop(effect.uri, None)
        for hid, (_line, _dst, h, _before, _after) in expected.items():
            if hid not in unconfirmed:
                results[hid] = "done"
                h.shows_new = effect.action != Action.REVERT
        self._refresh_buffer_neighbours(effect, wanted, results)
        return results, not unconfirmed, True

    def _refresh_buffer_neighbours(self, effect: EffectRow, wanted: Wanted, results: dict[str, str]) -> None:
        doc = self.st.doc(effect.uri)
        if doc is not None:
            done = [(h, e) for h, e in wanted if results.get(h.id) == "done"]
            self._refresh_neighbours(effect, doc.lines, done, wanted, buffer=True)

    def _refresh_neighbours(
        self, effect: EffectRow, lines: Sequence[str], done: Wanted, wanted: Wanted, *, buffer: bool = False
    ) -> None:
        """The edits of `done` are in `lines` (the file or the buffer as it is now): the other
        hunks next to them take their context from that text, as their positions moved with it
        (domain/neighbours.py); recorded with the effect's outcome, in the same commit."""
        if not done:
            return
        st = self.st
        mine = {h.id for h, _ in wanted}
        skip = (st.in_flight - mine) | (mine - {h.id for h, _ in done})  # another effect's, or not found
        written = [Written(h.line, h.line + len(lines_of(e["after"])), h.id) for h, e in done]
        # Only hunks within reach of what was written can be its neighbours (a file may hold
        # thousands of hunks, and each decision runs this).
        lo, hi = min(w.start for w in written) - CONTEXT, max(w.end for w in written) + CONTEXT
        near = [
            Neighbour(h.id, h.line, h.anchored_text(), h.ctx_before, h.ctx_after, buffer and h.tracked)
            for h in st.by_uri.get(effect.uri, {}).values()
            if h.line < hi and h.line + h.anchored_length() > lo and h.kind == Kind.EDIT and h.id not in skip
        ]
        fresh = refreshed_contexts(lines, near, written)
        for hid, (before, after) in fresh.items():
            h = st.hunks[hid]
            h.ctx_before, h.ctx_after = before, after
        if fresh:
            self._contexts.setdefault(effect.id, {}).update(fresh)

    async def _send(
        self, effect: EffectRow, version: int | None, lsp_edits: list[tuple[Range, str]], expected: Expected
    ) -> tuple[bool, list[str]]:
        """Send the edit to the editor: did it take it, and the hunks whose edit it has not shown yet."""
        st = self.st
        fault("effect:before-write")
        label = "Stet: undo change" if effect.action == Action.REVERT else "Stet: apply accepted change"
        try:
            ok = await asyncio.wait_for(
                st.editor.apply_edit(st.client_uri(effect.uri), version, lsp_edits, label), APPLY_TIMEOUT
            )
        except (TimeoutError, Exception) as exc:  # the editor failed us: retry later
            log.warning("applyEdit failed for %s: %s", effect.uri, exc)
            ok = False
        fault("effect:after-write")
        return ok, (await self._confirm_in_buffer(effect.uri, expected) if ok else list(expected))

    async def _confirm_in_buffer(self, uri: str, expected: Expected) -> list[str]:
        """Wait until the buffer shows each edit (editors may answer before their didChange)."""
        st = self.st
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONFIRM_TIMEOUT
        pending = dict(expected)
        while True:
            doc = st.doc(uri)
            if doc is None:
                return list(pending)
            index = None
            for hid, (line, dst, h, before, after) in list(pending.items()):
                # Stet put it there itself: the text at that very line is the evidence, whatever
                # the developer typed around it meanwhile; an edit that leaves no text, the lines
                # around it when it was journaled (the document's, not the proposal's).
                if dst and text_at(doc.lines, dst, line) or at_with_context(doc.lines, dst, line, before, after):
                    h.line, h.tracked = line, True
                    del pending[hid]
                    continue
                index = index or LineIndex(doc.lines)
                found = locate(index, dst, line, before, after, trust_hint=False)
                if found:
                    h.line, h.tracked = found.line, True
                    del pending[hid]
            remaining = deadline - loop.time()
            if not pending or remaining <= 0:
                return list(pending)
            event = st.doc_events.setdefault(uri, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                pass

    async def _finish(
        self,
        effect: EffectRow,
        results: dict[str, str],
        complete: bool,
        in_buffer: bool,
        moves: Sequence[tuple[str, str, str]] = (),
        why: Why | None = None,
    ) -> None:
        """Commit what the effect achieved: hunks applied or stale (and why), files moved, the
        effect's state; hunks whose effect waits to be tried again say why too."""
        why = why or Why()
        st = self.st
        store = st.require_store()
        fault("effect:before-confirm")
        state = settled(complete, in_buffer)
        written = self._written.pop(effect.id, None)
        contexts = self._contexts.pop(effect.id, {})
        # What the effect achieved is derived (recovery finds it again in the content and the
        # journal): committed without waiting for the disk, unlike the decision itself.
        async with store.write(derived=True) as tx:
            changed, changed_marks, placed = self._outcomes(effect, await tx.hunks(results), results, why)
            if not complete and why.waiting:
                # The decision stands, its edit waits: say why on each hunk still waiting.
                ids = [e["hunkId"] for e in effect.edits if e["hunkId"] not in results]
                for hid, r in (await tx.hunks(ids)).items():
                    if hid in st.hunks and r.problem != why.waiting and r.status in (Status.ACCEPTED, Status.APPLIED):
                        r.problem = why.waiting
                        r.line = st.hunks[hid].line
                        changed.append(r)
            # The edit moved the file's other hunks: record where, in the same commit, so a crash
            # right after does not leave them with stale positions (repeated lines could mislead).
            moved = [(r.line, r.id) for r in placed] + [
                (h.line, h.id)
                for h in st.by_uri.get(effect.uri, {}).values()
                if h.id not in results and h.line != h.stored_line
            ]
            if changed or moves or changed_marks or moved or contexts:
                lsn = await tx.log(
                    new_id("fx-"), "effect", {"effect": effect.id, "hunkIds": [r.id for r in changed + changed_marks]}
                )
                for r in changed + changed_marks:
                    r.lsn = lsn
                await tx.save_hunks(changed + changed_marks)
                await tx.save_lines(moved, lsn)  # positions alone, under the same operation
                # Their contexts too: taken again from the text this effect left next to them.
                await tx.save_contexts(contexts, lsn)
                for old_uri, new_uri, rename_id in moves:
                    # The file moved: its hunks follow it (the rename hunk keeps its own uri).
                    await tx.move_hunks(old_uri, new_uri, lsn, rename_id)
            # An edit now living in this window's unsaved buffer is this process's to settle.
            owner = owners.token() if state == State.UNSAVED else None
            await tx.set_effect(effect.id, state, effect.attempts + (0 if complete else 1), owner)
            if written is not None and complete and not moves:
                await tx.put_stamps([written])  # after the hunks' changes: it stands
            # Read with the COMMIT, in the same hop to SQLite's thread.
            still_pending = (
                tx.pending_effect_at_commit(effect.uri) if complete and effect.uri in st.effect_uris else None
            )
            loaded = tx.hunks_since_at_commit(st.seen_lsn)
        effect.state = state
        fault("effect:after-confirm")
        for hid in results:
            if hid in st.hunks:
                st.hunks[hid].stored_line = st.hunks[hid].line
        for line, hid in moved:
            if hid in st.hunks:
                st.hunks[hid].stored_line = line
        if still_pending is not None and not still_pending.rows:
            st.effect_uris.discard(effect.uri)
        await self.memory.sync(loaded)
        st.on_change({effect.uri, *(m[1] for m in moves)})

    def _outcomes(
        self, effect: EffectRow, rows: dict[str, Hunk], results: dict[str, str], why: Why
    ) -> tuple[list[Hunk], list[Hunk], list[Hunk]]:
        """Apply the domain's outcome to each hunk's stored row: (hunks changed, applied hunks
        back in the file - not a new version -, hunks whose position alone moved)."""
        action, was = effect.action, effect.state
        changed, changed_marks, placed = [], [], []
        for hid, result in results.items():
            r, mem = rows.get(hid), self.st.hunks.get(hid)
            if r is None or mem is None:
                continue
            out = outcome(action, was, r.status, Found(result))
            to = out.to
            if out.back_in_file:
                mem.in_file = True
                if r.in_file is False:
                    r.in_file = True
                    changed_marks.append(r)
            moved, r.line = r.line != mem.line, mem.line
            problem = why.stale.get(hid) if result == "stale" else None
            if to is not None:
                r.move_to(to, effect.action)
                r.problem = problem
                r.in_file = mem.in_file = True if to == Status.APPLIED else None
                changed.append(r)
            elif moved and (not changed_marks or changed_marks[-1] is not r):
                placed.append(r)
        return changed, changed_marks, placed

    async def run_pending(
        self,
        uri: str | None = None,
        states: Sequence[State] = (State.PENDING, State.UNSAVED),
        targets: Sequence[str] = ("file", "buffer"),
    ) -> None:
        """Carry out the journaled effects left to do (of one uri, or all)."""
        st = self.st
        store = st.require_store()
        async with st.op_lock:
            for effect in await store.open_effects():
                if (uri is None or effect.uri == uri) and effect.state in states and effect.target in targets:
                    if effect.state == State.UNSAVED and effect.uri in st.open and effect.uri not in st.closing:
                        continue  # the buffer holds it; settled at save, close or restart
                    if (effect.state == State.UNSAVED or effect.target == "buffer") and self._held_elsewhere(effect):
                        continue  # another live window's buffer holds it: that window settles it
                    if not self._here(effect):
                        continue  # its file is outside this process's roots: done where it is seen
                    await self.run_guarded(effect)
                    fault("recover:after-effect")

    async def run_guarded(self, effect: EffectRow) -> None:
        """`run`, where nothing but a store that cannot be written stops the caller: one
        effect that fails for a reason nobody foresaw stays journaled (tried again at the next
        start) and is logged, and the others, the recovery and the server go on."""
        try:
            await self.run(effect)
        except StoreUnavailable:
            raise
        except Exception:
            log.exception("effect %s (%s %s) failed; it stays journaled", effect.id, effect.action, effect.uri)

    def _here(self, effect: EffectRow) -> bool:
        """Are the files of the effect inside this process's roots?"""
        holds = self.st.ws.holds
        return holds(effect.uri) and all(holds(u) for e in effect.edits if (u := e.get("newUri")))

    @staticmethod
    def _held_elsewhere(effect: EffectRow) -> bool:
        return bool(effect.owner) and effect.owner != owners.token() and owners.alive(effect.owner)
