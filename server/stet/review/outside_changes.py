"""Files changed outside the editor (watchdog, the editor's file events, a checkout):
debounced, then the hunks of files no editor has open are re-located on disk."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from typing import Iterable

from ..domain.status import OPEN
from ..domain.text import split_lines
from ..errors import StetError
from ..workspace import read_text, uri_to_path
from .common import OUTSIDE_DEBOUNCE

log = logging.getLogger(__name__)


class OutsideChangesMixin:
    """Re-anchoring after changes on disk."""

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

