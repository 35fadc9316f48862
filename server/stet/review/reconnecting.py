"""The review of a long-lived process (the language server, the MCP server): the review once it is
open, else the last reason why not, and opening it again when its store may come back.

A store whose engine `reconnects` (PostgreSQL: a laptop that starts the editor or the agent
before the VPN is up) that cannot be reached, at the start or while the review was being
recovered, is tried again at the next request; an SQLite store that cannot be opened is refused
for good (not a Stet store, a newer schema: waiting does not change that). One attempt at a
time: a request that comes while one is under way waits for it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..errors import StetError, StoreUnavailable
from .service import Review
from .session import Opened, open_review
from .where import engine_of


class Reconnecting:
    """`opener` opens the review (open_review for `roots` and `db` unless given); `adopt`, when
    given, takes an opened review before anyone sees it (without an await: the process hands it
    what it kept meanwhile) and may refuse it (False: the process is stopping; it is closed)."""

    def __init__(
        self,
        roots: list[str],
        db: str,
        opener: Callable[[], Awaitable[Opened]] | None = None,
        adopt: Callable[[Opened], bool] | None = None,
    ) -> None:
        self.db = db
        self.again = engine_of(db).reconnects  # a store that may come back is tried again
        self.review: Review | None = None
        self.error: StetError | None = None  # why there is no review (the last attempt's reason)
        self.failed_before = False  # an attempt failed: the next ones add nothing new to say
        self._opener = opener or (lambda: open_review(roots, db))
        self._adopt = adopt
        self._attempt: asyncio.Future[None] | None = None

    def waiting(self) -> bool:
        """Is the review away only because its store could not be used now (worth another
        attempt)? Also when it opened but could not be recovered for want of the store."""
        if self.review is None:
            return self.again
        return self.again and isinstance(self.review.recovery_error, StoreUnavailable)

    def under_way(self) -> bool:
        return self._attempt is not None and not self._attempt.done()

    def begin(self, step: Callable[[], Awaitable[None]] | None = None) -> asyncio.Future[None]:
        """The attempt under way, else a new one: `step` (by default: open the review)."""
        if self._attempt is None or self._attempt.done():
            self._attempt = asyncio.ensure_future((step or self.open)())
        return self._attempt

    async def attempt(self, step: Callable[[], Awaitable[None]] | None = None) -> None:
        """Wait for the attempt under way, or for a new one (a waiter cancelled does not cancel it)."""
        await asyncio.shield(self.begin(step))

    async def open(self) -> None:
        """One opening: the review, or the reason why not."""
        try:
            opened = await self._opener()
        except StetError as exc:
            self.error, self.failed_before = exc, True
            return
        if self._adopt is not None and not self._adopt(opened):
            await opened.review.close()
            return
        self.review, self.error = opened.review, None

    async def current(self) -> Review:
        """The review: opened now when it is not and its store may come back; raises why not."""
        if self.review is None and self.again:
            await self.attempt()
        if self.review is None:
            raise self.error or StoreUnavailable("the review store is not open")
        return self.review
