"""Memory follows the store: load what changed since the last lsn, re-locate it in open
documents, and write back the status changes that follow from content."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence

from ..domain import fileop
from ..domain.anchor import Found, LineIndex, find_applied, locate, text_at
from ..domain.model import Hunk, Kind
from ..domain.status import Status, allowed
from ..errors import StetError
from ..store.tx import LaterHunks
from ..workspace import safe
from .config import new_id
from .stamps import Stamp
from .state import ReviewState


def _follow_neighbours(lost: list[Hunk], moved: list[tuple[int, int]]) -> None:
    """Where a text was not found, its last known place moves like its nearest neighbour
    above ((old line, shift) of the texts found)."""
    moved.sort()
    for h in lost:
        shift = 0
        for line, delta in moved:
            if line > h.line:
                break
            shift = delta
        h.line = max(0, h.line + shift)


class Memory:
    """Keeps `hunks`, `by_uri` and the anchors of open documents in step with the store."""

    def __init__(self, state: ReviewState):
        self.st = state
        self._sync_lock = asyncio.Lock()
        self._derive_lock = asyncio.Lock()
        self._derived: dict[str, tuple[Status, int, Status]] = {}
        self._why: dict[str, str] = {}  # why relocation found a file operation stale
        self._in_file_dirty: dict[str, tuple[int, bool]] = {}  # hunk id -> (version, in file)

    async def sync(self, loaded: LaterHunks | None = None, quiet: int | None = None) -> set[str]:
        """Load every hunk changed since the last lsn seen; notify the uris concerned.

        `loaded`: those hunks read already, with a commit this process just made
        (Tx.hunks_since_at_commit, a hop to SQLite's thread spared); a look made since that
        commit (the live sync, another task) has them, or newer: only what is newer than
        everything seen is merged. `quiet`: the lsn of positions this process stored as it
        shows them already (store_lines): merged, nothing to tell."""
        st = self.st
        async with self._sync_lock:
            if loaded is not None and loaded.hunks is not None:
                rows = [h for h in loaded.hunks if h.lsn > st.seen_lsn]
            else:
                rows = await st.require_store().hunks_since(st.seen_lsn)
            changed: set[str] = set()
            derived: list[tuple[Hunk, Status]] = []
            # Hunks of open documents are judged once the whole batch is merged, not row by
            # row: a part of a hunk is in the file under its rest, which a later row may bring.
            again: dict[str, list[Hunk]] = {}
            for row in rows:
                h = self._merge(row)
                if h is not None:
                    again.setdefault(h.uri, []).append(h)
                if row.lsn != quiet:
                    changed.add(row.uri)
                st.seen_lsn = max(st.seen_lsn, row.lsn)
            for uri, hunks in again.items():
                f = st.open.get(uri)
                if f is not None:
                    derived.extend(self.relocate(f.doc.lines, hunks, buffer=True))
            if st.split_from:
                self._parts_under({row.id for row in rows})
            if rows:
                st.generation += 1
        if derived:
            self.derive(derived)
        if changed:
            st.on_change(changed)
        return changed

    def _merge(self, row: Hunk) -> Hunk | None:
        """Merge one row into memory; return the hunk when its open document must judge it."""
        st = self.st
        if row.parts is not None:
            st.split_from.update(dict.fromkeys(row.parts, row.id))
        old = st.hunks.get(row.id)
        f = st.open.get(row.uri)
        if old is None:
            row.stored_line = row.line
            row.shows_new = row.shown_when_loaded()
            st.hunks[row.id] = row
            st.by_uri.setdefault(row.uri, {})[row.id] = row
            if f is None:
                return None
            f.anchors.put(row.id, row)
            return row
        if row.uri != old.uri:  # its file was renamed
            st.by_uri.get(old.uri, {}).pop(old.id, None)
            was = st.open.get(old.uri)
            if was is not None:
                was.anchors.drop(old.id)
            old.uri = row.uri
            st.by_uri.setdefault(row.uri, {})[row.id] = old
            if f is not None:
                f.anchors.put(row.id, old)
        status_changed = old.status != row.status
        for name in (
            "status",
            "feedback",
            "version",
            "decided_at",
            "applied_text",
            "lsn",
            "message",
            "task_id",
            "problem",
            "kept",
            "parts",
            "by_commit",
            "sent_back",
            "ctx_before",
            "ctx_after",
            "ctx_key",
        ):
            setattr(old, name, getattr(row, name))
        if f is None or row.status != Status.APPLIED or old.in_file is None:
            old.in_file = row.in_file
        elif row.in_file is not None and row.in_file != old.in_file and row.id not in st.in_flight:
            # Another process judged the file on disk; this editor's buffer is what counts here.
            self._in_file_dirty[row.id] = (row.version, old.in_file)
            st.background.spawn(self.flush_derived())
        old.stored_line = row.line
        if row.id in st.in_flight:
            return None
        if f is None:
            old.line = row.line
            old.shows_new = row.shown_when_loaded()
            old.tracked = False
        elif status_changed and (
            row.status in (Status.PENDING, Status.STALE) or (row.status == Status.APPLIED) != old.shows_new
        ):
            # The change may have been judged against other content (the file on disk while the
            # editor was re-opening it, another process): the open buffer is what counts.
            return old
        return None

    def _parts_under(self, changed: set[str]) -> None:
        """A rest (or a part of it) changed: a part whose change is now in the file under it is
        in the file, whatever was judged while the rest was away (recovery judges a lost
        buffer's file without the rest, then writes the rest's edit to disk again). The other
        way round, a rest's text gone is a change of the file: its hunks are all judged again."""
        st = self.st
        for hid in changed:
            for pid in st.resting_on(hid):
                p = st.hunks.get(pid)
                if p is not None and p.status == Status.APPLIED and p.in_file is False and pid not in st.in_flight:
                    if st.under_its_rest(p):
                        self.set_in_file(p, True)

    def relocate(
        self,
        lines: list[str] | None,
        hunks: Iterable[Hunk],
        index: LineIndex | None = None,
        *,
        blocked: str | None = None,
        buffer: bool = False,
    ) -> list[tuple[Hunk, Status]]:
        """Find each hunk's text in `lines` (None: the file does not exist); return the
        status changes that follow. An applied hunk's `in_file` is set from what is found
        (changes are queued to be stored, see `flush_derived`). With `buffer` (an open
        document's lines) a hunk found there is tracked from now on, and a tracked hunk's
        own position is evidence before its context. `blocked` says why the file's path
        cannot be used at all (a symlink on the way, not a file): no file operation can be
        carried out there."""
        if index is None:
            index = LineIndex(lines) if lines is not None else None
        derived = []
        moved: list[tuple[int, int]] = []  # (old line, shift) of the texts found
        lost: list[Hunk] = []
        parts: list[Hunk] = []  # applied parts of hunks not found: judged once their rests are
        for h in hunks:
            if h.id in self.st.in_flight:
                continue
            tracked = buffer and h.tracked
            if h.kind != Kind.EDIT:
                to = self._relocate_file_op(h, lines, blocked)
                if to is not None:
                    derived.append((h, to))
                continue
            if index is None:
                h.tracked = False
                if h.status == Status.PENDING:
                    derived.append((h, Status.STALE))
                elif h.status == Status.APPLIED:
                    self.set_in_file(h, not h.replacement and bool(h.old))  # a deletion stays done
                continue
            if h.status == Status.APPLIED:
                self._relocate_applied(h, index, buffer, parts)
                continue
            found = None
            if h.kept:
                # The agent's text was left in the file for review: it is where to look first.
                found = locate(index, h.replacement, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
                h.shows_new = found is not None
                if h.status == Status.PENDING:
                    self.set_in_file(h, found is not None)
            if not found:
                if tracked and h.old and text_at(index.lines, h.old, h.line):
                    found = Found(h.line, "tracked")
                else:
                    found = locate(index, h.old, h.line, h.ctx_before, h.ctx_after)
                h.shows_new = False
            if found:
                moved.append((h.line, found.line - h.line))
                h.line = found.line
                h.tracked = buffer
                if h.status == Status.STALE and h.problem and not buffer and self._edit_blocked(h):
                    continue  # its text is there, but the file still cannot be rewritten (a hard link...)
                if h.status == Status.STALE:
                    derived.append((h, Status.PENDING))
                continue
            h.tracked = False
            lost.append(h)
            if h.status == Status.PENDING:
                derived.append((h, Status.STALE))
            # An accepted hunk always has a journaled effect: running it decides (applied or stale).
        _follow_neighbours(lost, moved)
        for h in parts:
            self.set_in_file(h, self.st.under_its_rest(h))
        return derived

    def _relocate_applied(self, h: Hunk, index: LineIndex, buffer: bool, parts: list[Hunk]) -> None:
        """Is an applied hunk's new text in the document, and where. A part of a hunk whose
        text is not found goes to `parts`: it is in the file if its rest is applied over it."""
        tracked = buffer and h.tracked
        found = find_applied(index, h.replacement, h.old, h.line, h.ctx_before, h.ctx_after, tracked=tracked)
        if found:
            h.line, h.shows_new, h.tracked = found.line, True, buffer
            self.set_in_file(h, True)
            return
        if h.id in self.st.split_from:
            parts.append(h)
        else:
            self.set_in_file(h, False)
        found = locate(index, h.old, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
        if found:
            h.line, h.shows_new = found.line, False
        h.tracked = buffer and found is not None

    def _relocate_file_op(self, h: Hunk, lines: list[str] | None, blocked: str | None) -> Status | None:
        """`relocate` for a create, delete or rename: the status change that follows, if any."""
        if h.status in (Status.PENDING, Status.STALE):
            why = blocked or self._file_op_blocked(h)
            ok = why is None and self._file_op_applicable(h, lines)
            if ok and h.status == Status.STALE:
                return Status.PENDING
            if not ok and h.status == Status.PENDING:
                if why:
                    self._why[h.id] = why
                return Status.STALE
        elif h.status == Status.APPLIED:
            self.set_in_file(h, self._file_op_in_place(h, lines))
        return None

    def set_in_file(self, h: Hunk, there: bool) -> None:
        """Record what the content says of an applied hunk (or a kept one waiting for review:
        is the agent's text there); a change is queued to be stored."""
        if h.in_file_state() != there or h.in_file is None:
            h.in_file = there
            if not self._in_file_dirty:  # one flush for a whole batch of marks
                self.st.background.spawn(self.flush_derived())
            self._in_file_dirty[h.id] = (h.version, there)

    def _file_op_in_place(self, h: Hunk, lines: list[str] | None) -> bool:
        """Whether an applied create, delete or rename is still what the files show."""
        text = None if lines is None else "".join(lines)
        try:
            source = text is not None
            target = bool(h.new_uri) and safe.exists(self.st.ws.path_of(h.new_uri or ""))
        except (StetError, OSError, ValueError):
            return False
        return fileop.undoable(h.kind, text, "".join(h.replacement), source, target)

    def _file_op_applicable(self, h: Hunk, lines: list[str] | None) -> bool:
        text = None if lines is None else "".join(lines)
        target = False
        if h.kind == Kind.RENAME and h.new_uri:
            try:
                target = safe.exists(self.st.ws.path_of(h.new_uri))
            except (StetError, OSError, ValueError):
                return False
        if h.kept:
            # Left done in the files for review: done (shown) or still to do are both fine.
            done = fileop.undoable(h.kind, text, h.new_text, text is not None, target)
            h.shows_new = done
            if h.status == Status.PENDING:
                self.set_in_file(h, done)
            if done:
                return True
        return fileop.applicable(h.kind, text, h.old_text, h.new_text, target)

    def _edit_blocked(self, h: Hunk) -> str | None:
        """Why Stet still cannot rewrite the closed file of an edit it found stale with a problem."""
        try:
            return safe.cannot_rewrite(self.st.ws.path_of(h.uri))
        except StetError as exc:
            return exc.message

    def _file_op_blocked(self, h: Hunk) -> str | None:
        """Why the place a file operation would put a file cannot take one (a symlink or a
        file on the way, a path Stet refuses); None when nothing is in the way."""
        for uri in (h.new_uri,) if h.kind == Kind.RENAME else (h.uri,) if h.kind == Kind.CREATE else ():
            if not uri:
                continue
            try:
                path = self.st.ws.path_of(uri)
                parent = os.path.dirname(path)
                while not safe.exists(parent):  # the first folder on the way that exists
                    parent = os.path.dirname(parent)
                os.close(safe.open_folder(parent, final=False))
            except StetError as exc:
                return exc.message
            except OSError as exc:
                return exc.strerror or str(exc)
        return None

    def derive(self, changes: list[tuple[Hunk, Status]]) -> None:
        """Queue status changes that follow from content; they are written with a
        compare-and-set, so a decision made meanwhile (here or elsewhere) wins."""
        for h, to in changes:
            self._derived[h.id] = (h.status, h.version, to)
        self.st.background.spawn(self.flush_derived())

    async def flush_derived(self) -> None:
        """Store the status changes and `in_file` marks that content decided, each only if
        the hunk has not moved on meanwhile (compare-and-set on status and version)."""
        st = self.st
        async with self._derive_lock:
            if (not self._derived and not self._in_file_dirty) or st.store is None:
                return
            items, self._derived = self._derived, {}
            marks, self._in_file_dirty = self._in_file_dirty, {}
            async with st.store.write(derived=True) as tx:  # what content decided: derived
                rows = await tx.hunks([*items, *marks])
                ok: list[tuple[Hunk, Status | None]] = []
                for hid, (frm, version, to) in items.items():
                    r = rows.get(hid)
                    if r is None or r.status != frm or r.version != version:
                        continue
                    if not allowed(frm, to):
                        continue
                    ok.append((r, to))
                seen = {r.id for r, _ in ok}
                for hid, (version, there) in marks.items():
                    r = rows.get(hid)
                    if r is None or hid in seen or not (r.status == Status.APPLIED or r.kept_pending):
                        continue
                    if r.version != version:
                        continue
                    if r.in_file is not None and r.in_file == there:
                        continue
                    ok.append((r, None))
                if not ok:
                    return
                lsn = await tx.log(new_id("re-"), "reanchor", {"hunkIds": [r.id for r, _ in ok]})
                loaded = tx.hunks_since_at_commit(st.seen_lsn)
                for r, status in ok:
                    if status is not None:
                        r.move_to(status, "reanchor")
                        r.in_file = None
                        r.problem = self._why.pop(r.id, None) if status == Status.STALE else None
                    else:  # derived, like a position: no new version
                        r.in_file = marks[r.id][1]
                    r.lsn = lsn
                    r.line = st.hunks[r.id].line if r.id in st.hunks else r.line
                await tx.save_hunks([r for r, _ in ok], judged=True)
        await self.sync(loaded)

    async def checkpoint(self, uris: Iterable[str] | None = None) -> int:
        """Persist anchor positions that moved since the last checkpoint."""
        return await self.store_lines(uris)

    async def store_lines(self, uris: Iterable[str] | None = None, stamps: Sequence[Stamp] = ()) -> int:
        """Store the positions of these files' hunks (all files: None) that moved since they were
        last stored, with `stamps` (files judged on disk, see recheck) in the same commit: a
        stamp says the file's hunks are stored where that content has them. The positions are an
        operation of the log (`moved`), so every process that holds the review loads them when
        it next follows the log. Returns how many moved."""
        st = self.st
        if st.store is None:
            return 0
        moved = [
            (h.line, h.id)
            for uri in (uris if uris is not None else list(st.by_uri))
            for h in st.by_uri.get(uri, {}).values()
            if h.line != h.stored_line
        ]
        if not moved and not stamps:
            return 0
        # Positions in an open buffer are not where the file on disk has the hunks: the
        # next process to look must judge that file again, not trust its stamp.
        buffers = {st.hunks[hid].uri for _, hid in moved if hid in st.hunks and st.hunks[hid].uri in st.open}
        lsn, loaded = None, None
        async with st.store.write(derived=True) as tx:  # positions follow from content: derived
            if moved:
                lsn = await tx.log(new_id("mv-"), "moved", {"hunkIds": [hid for _, hid in moved]})
                await tx.save_lines(moved, lsn, buffers)
                loaded = tx.hunks_since_at_commit(st.seen_lsn)
            if stamps:
                await tx.put_stamps(list(stamps))  # after the positions: they stand
        for line, hid in moved:
            if hid in st.hunks:
                st.hunks[hid].stored_line = line
        if loaded is not None:
            await self.sync(loaded, quiet=lsn)
        return len(moved)
