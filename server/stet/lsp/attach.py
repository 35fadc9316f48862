"""Opening the server's review: at initialize, and again later when its PostgreSQL store could
not be reached then (a laptop that opens the editor before the VPN is up).

The review, or why there is none, is held by review/reconnecting.py's handle (the MCP server's
too), which says when another attempt is worth it and makes one at a time. What the editor
adds: a PostgreSQL store that cannot be reached at start (or that went away while the review
was being recovered) is also tried again by itself every few seconds; meanwhile the editor is
not held up (initialize waits at most OPEN_WAIT for it), is told once, and what it opens and
types is kept, so that the review, once open, starts from the buffers as they are.
"""

from __future__ import annotations

import asyncio
import logging
from itertools import chain, repeat
from typing import Any

from lsprotocol import types

from ..domain.document import Document
from ..errors import StoreUnavailable
from ..present.restored import restored
from ..review import Opened, Review, open_review
from ..review.reconnecting import Reconnecting
from ..runtime.live import Live
from .server import StetServer

log = logging.getLogger(__name__)

OPEN_WAIT = 2.0  # seconds initialize waits for a PostgreSQL store before answering without it
RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0)  # then every 10 s while it cannot be reached
RETRY_EVERY = 10.0


class Opening:
    def __init__(self, ls: StetServer, roots: list[str], path: str):
        self.ls = ls
        opener = lambda: open_review(roots, path, editor=ls, on_change=ls.publish, recover_later=True)  # noqa: E731
        self.handle = ls.handle = Reconnecting(roots, path, opener, self._adopt)
        self.initialized = False
        self.docs: dict[str, Document] = {}  # what the editor opened while there was no review
        self._retrying: asyncio.Task[None] | None = None
        self._told = False  # the editor was told the review cannot be used (once)
        self._watching = False

    # --- the editor's lifecycle ------------------------------------------------------------
    async def first(self) -> None:
        """initialize: the first attempt, waited for (a PostgreSQL store: at most OPEN_WAIT;
        the attempt goes on, and initialized waits for the rest)."""
        attempt = self.handle.begin(self._open)
        if self.handle.again:
            await asyncio.wait({attempt}, timeout=OPEN_WAIT)
        else:
            await attempt

    async def started(self) -> None:
        """initialized: start the review, or say once why there is none (and keep trying)."""
        self.initialized = True
        ls = self.ls
        if self.handle.under_way():
            await self.handle.attempt()
        review = ls.review
        if review is None:
            self._tell(ls.store_error or StoreUnavailable("the review store is not open"))
            self._keep_trying()
            return
        await self._start(review)

    async def review(self) -> Review:
        """The review for a request: a PostgreSQL store that could not be used (reached, or
        recovered from) is tried again now, or the attempt under way is waited for;
        StoreUnavailable if it still fails."""
        ls = self.ls
        if not ls.stopping:
            if self.handle.under_way():
                await self.handle.attempt()
            elif self.initialized and self.handle.waiting():
                await self.handle.attempt(self._connect)
        if ls.review is None:
            raise ls.store_error or StoreUnavailable("the server is not initialized")
        return ls.review

    async def stop(self) -> None:
        task, self._retrying = self._retrying, None
        if task is not None:
            task.cancel()

    # --- documents while there is no review ------------------------------------------------
    def opened(self, uri: str, text: str, version: int | None) -> None:
        self.docs[uri] = Document(uri, text, version)

    def changed(self, uri: str, version: int | None, changes: list[tuple[dict[str, Any] | None, str]]) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        for rng, text in changes:
            doc.apply_change(rng, text)
        doc.version = version

    def closed(self, uri: str) -> None:
        self.docs.pop(uri, None)

    # --- attempts --------------------------------------------------------------------------
    def _tell(self, error: Exception) -> None:
        if self._told:
            return
        self._told = True
        ls = self.ls
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"Stet: {error}"))
        ls.notify_json("stet/restored", {"files": 0, "counts": {}, "durationMs": 0, "error": str(error)})

    def _keep_trying(self) -> None:
        if self.handle.waiting() and not self.ls.stopping and (self._retrying is None or self._retrying.done()):
            self._retrying = asyncio.ensure_future(self._retry())

    async def _open(self) -> None:
        handle = self.handle
        failed_before = handle.failed_before
        await handle.open()
        if handle.review is None and handle.error is not None:
            # Said once (and to the editor by `started`); the attempts after it add nothing new.
            log.log(logging.DEBUG if failed_before else logging.ERROR, "%s", handle.error.message)
        elif handle.review is not None and failed_before:
            log.warning(
                "the review store %s can be reached again; the review is open", handle.review.require_store().path
            )

    def _adopt(self, opened: Opened) -> bool:
        """The review just opened, before anyone sees it (no await here: the buffers handed over
        are the buffers as they are); refused when the server is stopping."""
        ls = self.ls
        if ls.stopping:
            return False
        review = opened.review
        review.require_store().on_lost = lambda lost: ls.window_show_message(
            types.ShowMessageParams(types.MessageType.Error, f"Stet: {lost.message}")
        )
        ls.notice = opened.notice
        docs, self.docs = self.docs, {}
        for uri, doc in docs.items():
            review.opened(uri, doc.text, doc.version)
        return True

    async def _connect(self) -> None:
        """One more attempt: open the review if it is not, then recover and start it."""
        if self.ls.review is None:
            await self._open()
        review = self.ls.review
        if review is not None and not self.ls.stopping:
            await self._start(review)

    async def _retry(self) -> None:
        for delay in chain(RETRY_DELAYS, repeat(RETRY_EVERY)):
            await asyncio.sleep(delay)
            if self.ls.stopping or not self.handle.waiting():
                return
            await self.handle.attempt(self._connect)

    async def _start(self, review: Review) -> None:
        """Recover, start live sync and the inbox, and tell the editor (stet/restored). A
        recovery that could not reach the store is tried again like an opening."""
        ls = self.ls
        if ls.notice:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, ls.notice))
            ls.notice = None
        if not self._watching:
            self._watching = True
            _watch_files_through_the_editor(ls)
        try:
            summary = restored(await review.recover())
        except Exception as exc:
            if ls.stopping:  # the store was closed under it by the shutdown: nothing to tell
                return
            exc = review.recovery_error or exc
            if self.handle.waiting():  # not recovered for want of the store: live sync waits too
                self._tell(exc)
                self._keep_trying()
                return
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"Stet: {exc}"))
            summary = {"files": 0, "counts": {}, "durationMs": 0, "error": str(exc)}
        if ls.stopping or ls.live is not None:  # shut down while recovering: start nothing
            return
        # Live sync with other processes and the inbox start once recovery is done.
        ls.live = Live(
            review, warn=lambda m: ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, m))
        )
        await ls.live.start()
        if ls.live.warning:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, ls.live.warning))
        ls.notify_json("stet/restored", summary)


def _watch_files_through_the_editor(ls: StetServer) -> None:
    """Ask the editor to report file changes too, where it offers that (it sees what it saves)."""
    caps = ls.client_capabilities.workspace
    if not (caps and caps.did_change_watched_files and caps.did_change_watched_files.dynamic_registration):
        return
    registration = types.Registration(
        id="stet-watch",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
        ),
    )
    future = ls.protocol.send_request(types.CLIENT_REGISTER_CAPABILITY, types.RegistrationParams([registration]))
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # an editor may refuse: harmless
