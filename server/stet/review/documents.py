"""The editor's documents: open, change, save, close. Hunks move with every edit in memory
and are checkpointed later."""

from __future__ import annotations

from ..domain.anchor import Anchors, at_with_context, text_at
from ..domain.document import Document
from ..domain.model import Hunk
from ..domain.status import OPEN, Status
from .common import IDLE_CHECKPOINT, RETRY_DELAY


class DocumentsMixin:
    """Events from the editor's text documents."""

    def opened(self, client_uri: str, text: str, version: int | None) -> None:
        try:
            uri = self.uri_of(client_uri)
        except Exception:
            return  # not ours to review
        doc = Document(uri, text, version)
        self.docs[uri] = doc
        self.client_uris[uri] = client_uri
        self._open_as[client_uri] = uri
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
        # A document the editor opened keeps the uri it was resolved to then: no realpath
        # (a system call per path component) for every keystroke.
        uri = self._open_as.get(client_uri)
        if uri is None:
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
        # A delete or rename refused for the buffer's unsaved work may go ahead once it is saved.
        doc = self.docs.get(uri)
        ops = [h for h in self.by_uri.get(uri, {}).values() if h.kind != "edit" and h.status == Status.STALE]
        if doc is not None and ops:
            derived = self._relocate(doc.lines, ops)
            if derived:
                self._derive(derived)

    async def closed(self, client_uri: str) -> None:
        uri = self._known(client_uri)
        if uri is None:
            return
        self.docs.pop(uri, None)
        self.anchors.pop(uri, None)
        self.client_uris.pop(uri, None)
        self._open_as.pop(client_uri, None)
        self._signal(uri)
        if self.store is None:
            return
        # The buffer is gone: what it held of accepted work must reach the file.
        await self.run_pending_effects(uri)
        await self._relocate_on_disk({uri})

