"""The editor's documents: open, change, save, close. Hunks move with every edit in memory
and are checkpointed later."""

from __future__ import annotations

from ..domain.anchor import Anchors, at_with_context, text_at
from ..domain.document import Document
from ..domain.effect_outcome import State
from ..domain.model import Hunk, Kind
from ..domain.shapes import JSON
from ..domain.status import OPEN, Status
from ..errors import StetError
from .config import IDLE_CHECKPOINT, RETRY_DELAY
from .effects import Effects
from .memory import Memory
from .outside_changes import OutsideChanges
from .state import OpenFile, ReviewState

# One content change of didChange: (LSP range or None for the whole text, new text).
ContentChange = tuple[JSON | None, str]


class Documents:
    """Events from the editor's text documents."""

    def __init__(self, state: ReviewState, memory: Memory, effects: Effects, outside: OutsideChanges):
        self.st = state
        self.memory = memory
        self.effects = effects
        self.outside = outside

    def opened(self, client_uri: str, text: str, version: int | None) -> None:
        st = self.st
        try:
            uri = st.uri_of(client_uri)
        except StetError:
            return  # not ours to review
        doc = Document(uri, text, version)
        f = OpenFile(doc, Anchors(), client_uri)
        st.open[uri] = f
        st.open_as[client_uri] = uri
        hunks = list(st.by_uri.get(uri, {}).values())
        for h in hunks:
            f.anchors.put(h.id, h)
        derived = self.memory.relocate(doc.lines, hunks, buffer=True)
        if derived:
            self.memory.derive(derived)
        st.signal(uri)
        if hunks:
            st.on_change({uri})
        if uri in st.effect_uris:
            st.background.later(f"retry:{uri}", RETRY_DELAY, lambda: self._retry(uri))

    def changed(self, client_uri: str, version: int | None, changes: list[ContentChange]) -> None:
        st = self.st
        uri = self._known(client_uri)
        if uri is None:
            return
        f = st.open[uri]
        doc, anchors = f.doc, f.anchors
        doc.version = version
        touched: set[str] = set()
        full = False
        for rng, text in changes:
            edit = doc.apply_change(rng, text)
            if edit is None:
                full = True
            elif len(anchors):
                touched |= anchors.apply(edit)
        if full:
            derived = self.memory.relocate(doc.lines, list(st.by_uri.get(uri, {}).values()), buffer=True)
        else:
            derived = self._verify(doc.lines, touched)
        if derived:
            self.memory.derive(derived)
        st.signal(uri)
        if len(anchors):
            st.background.later(f"publish:{uri}", 0.1, lambda: self._publish(uri))
            st.background.later("checkpoint", IDLE_CHECKPOINT, self.memory.checkpoint)
        if uri in st.effect_uris:
            st.background.later(f"retry:{uri}", RETRY_DELAY, lambda: self._retry(uri))

    def _verify(self, lines: list[str], touched: set[str]) -> list[tuple[Hunk, Status]]:
        derived = []
        for hid in touched:
            h = self.st.hunks.get(hid)
            if h is None or hid in self.st.in_flight:
                continue
            if h.status == Status.APPLIED or h.kind != Kind.EDIT and h.status in OPEN:
                # An applied hunk's text typed away or put back (an editor's undo, a redo).
                derived.extend(self.memory.relocate(lines, [h], buffer=True))
                continue
            if h.status == Status.ACCEPTED:
                # Its journaled edit decides (the retry below runs it): the edit may be this
                # very change, arriving after the command answered (eglot sends it when idle).
                continue
            if h.status not in OPEN:
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
        self.st.on_change({uri})

    def _known(self, client_uri: str) -> str | None:
        # A document the editor opened keeps the uri it was resolved to then: no realpath
        # (a system call per path component) for every keystroke.
        uri = self.st.open_as.get(client_uri)
        if uri is None:
            try:
                uri = self.st.uri_of(client_uri)
            except StetError:
                return None
        return uri if uri in self.st.open else None

    async def _retry(self, uri: str) -> None:
        if self.st.store is not None and self.st.ready.is_set():
            await self.effects.run_pending(uri, states=(State.PENDING,))

    async def saved(self, client_uri: str) -> None:
        st = self.st
        uri = self._known(client_uri)
        if uri is None or st.store is None:
            return
        async with st.store.write() as tx:
            await tx.settle_saved_effects(uri)
        await self.memory.checkpoint({uri})
        # A delete or rename refused for the buffer's unsaved work may go ahead once it is saved.
        doc = st.doc(uri)
        ops = [h for h in st.by_uri.get(uri, {}).values() if h.kind != Kind.EDIT and h.status == Status.STALE]
        if doc is not None and ops:
            derived = self.memory.relocate(doc.lines, ops, buffer=True)
            if derived:
                self.memory.derive(derived)

    def closed(self, client_uri: str) -> None:
        """Forgotten at once, in the order the editor sent it (a didOpen read right after is a
        new buffer, read from disk: this one is gone); what it held of accepted work is settled
        next, in the background."""
        st = self.st
        uri = self._known(client_uri)
        if uri is None:
            return
        st.open.pop(uri, None)
        st.open_as.pop(client_uri, None)
        for h in st.by_uri.get(uri, {}).values():
            h.tracked = False  # nothing follows its position any more
        st.signal(uri)
        if st.store is None:
            return
        st.closing[uri] = st.closing.get(uri, 0) + 1
        st.background.spawn(self._settle_closed(uri))

    async def _settle_closed(self, uri: str) -> None:
        # What the buffer held of accepted work must reach the file (or the buffer the editor
        # opened again meanwhile: that one was read from the disk).
        st = self.st
        try:
            await self.effects.run_pending(uri)
        finally:
            st.closing[uri] -= 1
            if not st.closing[uri]:
                del st.closing[uri]
        await self.outside.relocate_on_disk({uri})
