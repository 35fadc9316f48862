"""A running server's background duties: follow the shared store, ingest the inbox."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from ..errors import StetError
from ..review import Review
from .follow import Follower
from .inbox import Inbox
from .outside_watch import OutsideWatch
from .watcher import Watcher

log = logging.getLogger(__name__)


class Live:
    def __init__(self, review: Review, warn: Callable[[str], None] | None = None):
        self.review = review
        # How a running process tells its user something went wrong in the background.
        self.warn = warn or (lambda message: log.warning("%s", message))
        self.follower = Follower(review)
        self.watcher: Watcher | None = None
        self.inbox: Inbox | None = None
        self.outside: OutsideWatch | None = None

    @property
    def warning(self) -> str | None:
        return self.watcher.warning if self.watcher else None

    async def start(self) -> None:
        store = self.review.store
        if store is None:
            return
        self.follower.start()
        self.watcher = Watcher()
        self.watcher.start()
        self.outside = OutsideWatch(self.review, self.watcher)
        self.outside.start()
        folder = os.path.join(store.home, "inbox")
        try:
            self.inbox = Inbox(folder, self.review, self.warn)
            await self.inbox.start(self.watcher)
        except (StetError, OSError) as exc:
            self.warn(
                f"Stet's inbox {folder} is not used: {getattr(exc, 'message', None) or exc}. "
                "Make it a real folder (not a symlink) and restart Stet to use it."
            )
            self.inbox = None

    async def stop(self) -> None:
        if self.outside is not None:
            await self.outside.stop()
        if self.inbox is not None:
            self.inbox.stop()
        if self.watcher is not None:
            self.watcher.stop()
        await self.follower.stop()
