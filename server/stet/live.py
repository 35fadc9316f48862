"""A running server's background duties: follow the shared store, ingest the inbox."""

from __future__ import annotations

import logging
import os

from .follow import Follower
from .inbox import Inbox, inbox_folder
from .review import Review
from .watch import Watcher

log = logging.getLogger(__name__)


class Live:
    def __init__(self, review: Review):
        self.review = review
        self.follower = Follower(review)
        self.watcher: Watcher | None = None
        self.inbox: Inbox | None = None

    @property
    def warning(self) -> str | None:
        return self.watcher.warning if self.watcher else None

    async def start(self) -> None:
        store = self.review.store
        if store is None:
            return
        self.follower.start()
        self.watcher = Watcher()
        folder = inbox_folder(store.path)
        # A commit by another process touches the WAL file: check at once rather than at the next tick.
        db_dir, db_name = os.path.split(store.path)
        self.watcher.watch(db_dir, lambda ev: self._db_event(ev, db_name))
        try:
            self.inbox = Inbox(folder, self.review)
            await self.inbox.start(self.watcher)
        except OSError as exc:
            log.warning("the inbox %s cannot be used: %s", folder, exc)
            self.inbox = None
        self.watcher.start()

    def _db_event(self, event, db_name: str) -> None:
        name = os.path.basename(getattr(event, "dest_path", "") or event.src_path)
        if name in (db_name, db_name + "-wal") and event.event_type in ("modified", "closed", "created", "moved"):
            self.follower.poke()

    async def stop(self) -> None:
        if self.inbox is not None:
            self.inbox.stop()
        if self.watcher is not None:
            self.watcher.stop()
        await self.follower.stop()
