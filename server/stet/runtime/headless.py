"""The headless runner (`stet watch`): what a language server does in the background, for
agents without an editor. It ingests the inbox, re-checks files changed outside Stet, and
finishes journaled edits decided by other processes (a CLI killed between its decision and
its write), until it is stopped."""

from __future__ import annotations

import asyncio
import logging
import os

from ..errors import StoreLost
from ..review import Review
from .follow import Follower
from .inbox import Inbox
from .outside_watch import OutsideWatch
from .watcher import Watcher

log = logging.getLogger(__name__)

INTERVAL = float(os.environ.get("STET_WATCH_INTERVAL", "0.5"))  # seconds between looks at the store


class Headless:
    def __init__(self, review: Review):
        self.review = review
        self.watcher = Watcher()
        self.follower = Follower(review)
        self.outside = OutsideWatch(review, self.watcher)
        self.inbox = Inbox(os.path.join(review.require_store().home, "inbox"), review)
        self.rounds = 0

    @property
    def warning(self) -> str | None:
        return self.watcher.warning

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until `stop` is set; everything started is stopped again, whatever happens."""
        self.watcher.start()
        try:
            self.follower.start()
            self.outside.start()
            await self.inbox.start(self.watcher)
            while not stop.is_set():
                try:
                    # Other processes' decisions and their journaled edits; files changed since.
                    lag = (await self.review.up_to_date()).lag
                    if lag:
                        log.warning("stet watch: %s", lag)
                except StoreLost as exc:  # nothing more can be acknowledged: say so and stop
                    log.error("stet watch: %s", exc.message)
                    raise
                except Exception as exc:  # keep serving: the next round tries again
                    log.warning("stet watch: %s", exc)
                self.rounds += 1
                try:
                    await asyncio.wait_for(stop.wait(), INTERVAL)
                except TimeoutError:
                    pass
        finally:
            self.inbox.stop()
            await self.outside.stop()
            await self.follower.stop()
            self.watcher.stop()
