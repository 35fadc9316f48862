"""Live sync: follow what other processes commit to the shared store.

Every process sharing a store (editor windows, the CLI, the inbox of another server)
writes through the operation log. A running server checks `PRAGMA data_version` a few
times a second (cheap: it changes only when another connection committed) and then runs
`Review.sync()`, which loads every hunk changed since the last lsn it saw and publishes
them to the editor: the same path as recovery at start, not a second mechanism. About once a
second it also looks whether HEAD moved (`Review.notice_commits`: a commit keeps the agent's
kept hunks it holds), which costs a stat of git's HEAD files when nothing moved.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time

from ..errors import StetError, StoreLost
from ..review import Review
from .stopping import cancel_and_wait

log = logging.getLogger(__name__)

INTERVAL = float(os.environ.get("STET_SYNC_INTERVAL", "0.2"))
HEAD_EVERY = 1.0  # seconds between looks at HEAD (a commit the developer made meanwhile)


class Follower:
    def __init__(self, review: Review, interval: float = INTERVAL):
        self.review = review
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self.syncs = 0

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    async def _run(self) -> None:
        last = None
        failures = 0
        looked = time.monotonic()
        while True:
            try:
                store = self.review.store
                if store is None:
                    return
                await store.check()  # a deleted store is noticed (and said) within one interval
                version = await store.data_version()
                if version != last:
                    if last is not None:
                        await self.review.sync()
                        self.syncs += 1
                    last = version
                if time.monotonic() - looked >= HEAD_EVERY:
                    looked = time.monotonic()
                    await self.review.notice_commits()
                failures = 0
            except asyncio.CancelledError:
                raise
            except StoreLost:
                return  # said once by the store (on_lost); nothing more to follow
            except Exception as exc:  # a closed or unavailable store, or a bug: back off, keep following
                failures += 1
                if failures in (1, 10, 100):
                    log.warning("live sync: %s", exc, exc_info=not isinstance(exc, StetError))
            await asyncio.sleep(self.interval * (1 if failures == 0 else min(failures, 25)))
