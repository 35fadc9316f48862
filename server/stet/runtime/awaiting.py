"""Waiting for the review to change: one look at the store for every waiter.

MCP's `wait_for_decisions` blocks until the developer decided. Each waiter once caught the
review up itself every 0.25 s (100 waits: a quarter of a core). Here one task per review, running
only while someone waits, waits on the store's own change signal (`next_change`: PostgreSQL's
LISTEN/NOTIFY; SQLite's `data_version`, what the live sync follows), catches the review up once
and wakes every waiter. Every FULL_LOOK seconds it catches up anyway: files changed on disk, and
this process's own commits, which the signal does not count.
"""

from __future__ import annotations

import asyncio
import logging

from ..errors import StetError
from ..review import Review
from .stopping import cancel_and_wait

log = logging.getLogger(__name__)

FULL_LOOK = 5.0  # seconds between two catch-ups with nothing signalled, while someone waits
BACK_OFF = 1.0  # seconds after a failed look before the next


class Changes:
    """What changed in one review, for whoever waits: `generation` grows at each catch-up
    (`error`: the last one failed, None once one succeeds)."""

    def __init__(self, review: Review, full_look: float = FULL_LOOK) -> None:
        self.review = review
        self.full_look = full_look
        self.generation = 0
        self.error: StetError | None = None
        self._woken = asyncio.Event()
        self._waiters = 0
        self._task: asyncio.Task[None] | None = None

    async def wait(self, generation: int, timeout: float) -> None:
        """Return once the review caught up after `generation` (read before looking at it: a
        catch-up in between is not missed), or after `timeout` seconds."""
        if self.generation != generation:
            return
        woken = self._woken
        self._waiters += 1
        try:
            if self._task is None or self._task.done():
                self._task = asyncio.ensure_future(self._run())
            try:
                await asyncio.wait_for(woken.wait(), timeout)
            except TimeoutError:
                pass
        finally:
            self._waiters -= 1

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    def _wake(self) -> None:
        self.generation += 1
        woken, self._woken = self._woken, asyncio.Event()
        woken.set()

    async def _run(self) -> None:
        version: int | None = None
        while self._waiters:
            try:
                store = self.review.require_store()
                if version is None:  # read before catching up: what commits after it is signalled
                    version = await store.data_version()
                    changed = bool((await self.review.up_to_date()).changed)
                else:
                    version = await store.next_change(version, self.full_look)
                    await self.review.up_to_date()
                    changed = True
                self.error = None
            except asyncio.CancelledError:
                raise
            except StetError as exc:  # said to the waiters, who answer with it
                self.error, version, changed = exc, None, True
            except Exception as exc:  # a bug: said, and the waiters still time out
                log.warning("waiting for changes: %s", exc, exc_info=True)
                version, changed = None, False
            if changed:
                self._wake()
            if version is None:
                await asyncio.sleep(BACK_OFF)
