"""Files changed outside the editor (watchdog, the editor's file events, a checkout):
debounced, then the hunks of files no editor has open are re-located on disk."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable

from ..domain.status import OPEN, Status
from ..domain.text import split_lines
from ..errors import StetError
from ..workspace.files import read_text
from ..workspace.paths import uri_to_path
from .config import OUTSIDE_DEBOUNCE
from .memory import Memory
from .stamps import Stamp, stat_of, text_hash
from .state import ReviewState

log = logging.getLogger(__name__)


class OutsideChanges:
    """Re-anchoring after changes on disk."""

    def __init__(self, state: ReviewState, memory: Memory):
        self.st = state
        self.memory = memory
        self._pending: set[str] = set()

    def changed(self, uris: Iterable[str]) -> None:
        """Files changed on disk (a checkout, another tool, the agent): re-anchor their hunks."""
        targets = self._rename_targets()
        for uri in uris:
            if uri in self.st.by_uri or uri in targets:
                self._pending.add(uri)
        if self._pending:
            self.st.background.later("outside", OUTSIDE_DEBOUNCE, self._flush)

    def folders_to_watch(self) -> set[str]:
        """Folders holding files (or rename targets) with open hunks."""
        folders = set()
        for uri, hunks in self.st.by_uri.items():
            for h in hunks.values():
                if h.status in OPEN or h.status == Status.APPLIED:
                    for u in (uri, h.new_uri):
                        if u:
                            try:
                                folders.add(os.path.dirname(uri_to_path(u)))  # stored uris are already real paths
                            except StetError:
                                continue
                    break
        return folders

    def _rename_targets(self) -> dict[str, str]:
        return {h.new_uri: h.uri for h in self.st.hunks.values() if h.new_uri and h.status in OPEN}

    async def _flush(self) -> None:
        st = self.st
        uris, self._pending = self._pending, set()
        if st.store is None or not st.ready.is_set():
            return
        targets = self._rename_targets()
        todo = set()
        for uri in uris:
            if uri in targets:
                todo.add(targets[uri])
            if uri in st.open:
                continue  # the editor's buffer is what counts while it is open
            try:
                path = st.ws.path_of(uri)
                text = await asyncio.to_thread(read_text, path)
            except Exception:
                todo.add(uri)
                continue
            digest = text_hash(text)
            if path in st.own_writes and st.own_writes[path] == digest:
                continue  # what we wrote ourselves
            todo.add(uri)
        if todo:
            await self.relocate_on_disk(todo)

    async def relocate_on_disk(self, uris: Iterable[str]) -> None:
        """Re-locate the hunks of these files (those no editor has open) in the files on disk,
        and stamp each file as judged (see `recheck`)."""
        st = self.st
        uris = set(uris)
        derived = []
        stamps: list[Stamp] = []
        for uri in uris:
            hunks = [h for h in st.by_uri.get(uri, {}).values() if h.status in OPEN or h.status == Status.APPLIED]
            if not hunks or uri in st.open or not st.ws.holds(uri):
                continue  # (a file no root of this process holds: judged where it is seen)
            blocked = None
            stamp: Stamp | None = None
            try:
                path = st.ws.path_of(uri)
                size, mtime = await asyncio.to_thread(stat_of, path)  # before reading: a later change shows
                text = await asyncio.to_thread(read_text, path)
                stamp = (uri, size, mtime, text_hash(text))
            except Exception as exc:  # unreadable now: treat like a missing file
                log.warning("cannot read %s: %s", uri, exc)
                text = None
                # A symlink on the way, a FIFO, a file where a folder should be: no file
                # operation can be carried out there either.
                blocked = getattr(exc, "message", None) or str(exc)
            if uri in st.open:
                # The editor opened it while the disk was read (a restart's didOpen on a busy
                # machine): its buffer, already judged by `opened`, is what counts.
                continue
            if stamp is not None:
                stamps.append(stamp)
            derived.extend(self.memory.relocate(None if text is None else split_lines(text), hunks, blocked=blocked))
        if derived:
            self.memory.derive(derived)
        await self.memory.flush_derived()
        # Where the hunks are now, with the stamps that say they were judged against this
        # content: a process that trusts the stamp reads these positions, not older ones.
        await self.memory.store_lines([u for u in uris if u not in st.open], stamps)
        st.on_change(uris)
