"""Files changed outside the editor, seen by watchdog: their hunks are re-anchored.

Only the folders that hold files with open hunks are watched (not the whole workspace:
a large tree would exhaust inotify for nothing). New folders are added as proposals
arrive. Editors' atomic saves (a temp file renamed over the real one) arrive as moves
whose destination is the real file. Bursts are debounced by the review, which also skips
files whose buffer is open and files whose content is what Stet itself wrote.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING

from ..review import Review
from ..workspace.paths import path_to_uri
from .stopping import cancel_and_wait
from .watcher import Watcher

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent

log = logging.getLogger(__name__)

RESCAN = 0.5  # seconds between looks for folders newly holding hunks
# What a change to a file looks like. watchdog also reports a file opened and closed without a
# write: those are reads (ours included, when we re-check a file), and taking them for changes
# made every re-check trigger the next one, forever.
CHANGES = frozenset({"created", "modified", "moved", "deleted", "closed"})


class OutsideWatch:
    def __init__(self, review: Review, watcher: Watcher):
        self.review = review
        self.watcher = watcher
        self.folders: set[str] = set()
        self._seen_generation = -1
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._add_folders()
        self._task = asyncio.ensure_future(self._rescan())

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    async def _rescan(self) -> None:
        while True:
            await asyncio.sleep(RESCAN)
            try:
                self._add_folders()
            except Exception as exc:  # never let watching take the server down
                log.warning("watching for outside changes: %s", exc)

    def _add_folders(self) -> None:
        if self.review.generation == self._seen_generation:
            return
        self._seen_generation = self.review.generation
        for folder in self.review.folders_to_watch():
            if folder in self.folders or not os.path.isdir(folder):
                continue
            self.folders.add(folder)
            log.debug("watching %s for outside changes", folder)
            self.watcher.watch(folder, self._on_event)

    def _on_event(self, event: FileSystemEvent) -> None:
        log.debug("file event %s", event)
        if event.is_directory or event.event_type not in CHANGES:
            return
        uris = set()
        for path in (event.src_path, getattr(event, "dest_path", None)):
            if not path:
                continue
            path = os.fsdecode(path)
            if f"{os.sep}.stet{os.sep}" in path or os.path.basename(path).startswith(".") and ".stet-tmp-" in path:
                continue  # our own store and our own temp files
            uris.add(path_to_uri(os.path.realpath(path)))
        if uris:
            self.review.outside_changed(uris)
