"""The review's one shared state object, handed to each part of the service.

Every collaborator (memory, proposing, deciding, effects, documents, outside changes,
recovery) works on this object and nothing else of the others' insides: what it holds is
written down here, with its type, once.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..domain.anchor import Anchors
from ..domain.document import Document
from ..domain.model import Hunk
from ..domain.status import Status
from ..domain.text import split_lines
from ..errors import StetError, StoreUnavailable
from ..store import StoreApi
from ..workspace.files import read_bytes, read_text
from ..workspace.paths import Workspace
from .config import Editor, Limits
from .stamps import text_hash

log = logging.getLogger(__name__)


@dataclass(eq=False)
class OpenFile:
    """A document the editor has open: its buffer, the anchors of its hunks in that buffer,
    and the uri the editor calls it by (which may differ from the normalised one)."""

    doc: Document
    anchors: Anchors
    client_uri: str


class Background:
    """Debounced timers and background tasks; all cancelled together when the review closes."""

    def __init__(self) -> None:
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        exc = None if task.cancelled() else task.exception()
        if isinstance(exc, StetError):  # foreseen (the store cannot be used): said in one line
            log.warning("background task failed: %s", exc.message)
        elif exc is not None:
            log.error("background task failed", exc_info=exc)

    def later(self, key: str, delay: float, fn: Callable[[], Awaitable[Any]]) -> None:
        """Run `fn` once, `delay` seconds after the last call with this key (a debounce)."""
        old = self._timers.pop(key, None)
        if old:
            old.cancel()

        def fire() -> None:
            self._timers.pop(key, None)
            self.spawn(fn())

        self._timers[key] = asyncio.get_running_loop().call_later(delay, fire)

    def cancel_all(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()


class ReviewState:
    """What one review of one workspace knows, in memory, between store commits."""

    def __init__(self, ws: Workspace, editor: Editor, on_change: Callable[[set[str]], None], limits: Limits):
        self.ws = ws
        self.editor = editor
        self._announce = on_change  # called with the uris whose hunks changed (see on_change)
        self.held: set[str] = set()  # uris whose announcement waits for an edit on its way (on_change)
        self.limits = limits
        self.store: StoreApi | None = None
        self.store_error: StoreUnavailable | None = None
        self.recovery_error: StetError | None = None
        self.hunks: dict[str, Hunk] = {}
        self.by_uri: dict[str, dict[str, Hunk]] = {}
        self.open: dict[str, OpenFile] = {}  # uri -> the editor's open document
        self.open_as: dict[str, str] = {}  # client uri of an open document -> its uri
        self.in_flight: set[str] = set()  # hunks whose effect is running: memory keeps them put
        self.split_from: dict[str, str] = {}  # a part of a hunk, or its rest -> the hunk split
        self.effect_uris: set[str] = set()  # uris with effects not finished yet
        # uri -> buffers of it closed whose unsaved edits are not settled yet: a buffer opened
        # again meanwhile (from disk) does not hold them.
        self.closing: dict[str, int] = {}
        self.seen_lsn = 0
        self.generation = 0  # bumped whenever hunks change in memory: cheap "anything new?" test
        self.ready = asyncio.Event()
        self.op_lock = asyncio.Lock()  # one proposal or decision at a time in this process
        self.doc_events: dict[str, asyncio.Event] = {}  # waiters for a document's next change
        self.own_writes: dict[str, str | None] = {}  # path -> hash of what Stet itself wrote there
        self.background = Background()

    def on_change(self, uris: set[str]) -> None:
        """Tell the editor these uris' hunks changed - a buffer an edit of Stet's is on its way to
        once it has it: memory places that buffer's hunks where the edit leaves their text (a
        part's rest), and an editor told before its buffer holds the edit draws them off by the
        edit's lines, with nothing after to correct it. `settle` tells it then."""
        busy = {u for u in uris if self._editing(u)}
        if busy:
            self.held |= busy
            uris = set(uris) - busy
        if uris:
            self._announce(uris)

    def settle(self, hunk_ids: Iterable[str]) -> None:
        """These hunks' edits have run (or failed): out of `in_flight`, and the announcements
        held for their buffers made."""
        self.in_flight.difference_update(hunk_ids)
        ready = {u for u in self.held if not self._editing(u)}
        if ready:
            self.held -= ready
            self._announce(ready)

    def _editing(self, uri: str) -> bool:
        """Is an edit of Stet's on its way to this uri's open buffer?"""
        return bool(self.in_flight) and uri in self.open and any(h in self.in_flight for h in self.by_uri.get(uri, ()))

    def under_its_rest(self, h: Hunk) -> bool:
        """An accepted part whose rest (or a part of the rest, split again) is accepted too, or
        kept in the file for review: the part's change is in the file under theirs, where its
        own new text need not be."""
        original = self.hunks.get(self.split_from.get(h.id, ""))
        if original is None or original.parts is None or original.parts[0] != h.id:
            return False
        todo = [original.parts[1]]
        while todo:
            rest = self.hunks.get(todo.pop())
            if rest is None:
                continue
            if (rest.status in (Status.ACCEPTED, Status.APPLIED) or rest.kept_pending) and rest.in_file is not False:
                return True
            if rest.parts is not None:
                todo.extend(rest.parts)
        return False

    def resting_on(self, hid: str) -> list[str]:
        """The accepted parts whose change may be in the file under hunk `hid` (their rest, or
        a part of their rest split again): `under_its_rest` of each depends on it."""
        out = []
        x = hid
        while (o := self.hunks.get(self.split_from.get(x, ""))) is not None and o.parts is not None:
            if o.parts[1] == x:
                out.append(o.parts[0])
            x = o.id
        return out

    def require_store(self) -> StoreApi:
        if self.store is None:
            raise self.store_error or StoreUnavailable("the review store is not open yet")
        return self.store

    def uri_of(self, uri: str) -> str:
        return self.ws.normalize(uri)

    def doc(self, uri: str) -> Document | None:
        f = self.open.get(uri)
        return f.doc if f is not None else None

    async def text_now(self, uri: str) -> str | None:
        """The file's text as the review sees it now: the open buffer, else the disk (None:
        no such file)."""
        doc = self.doc(uri)
        if doc is not None:
            return doc.text
        return await asyncio.to_thread(read_text, self.ws.path_of(uri))

    async def lines_now(self, uri: str) -> list[str] | None:
        """`text_now` in lines (an open buffer's own, not split again)."""
        doc = self.doc(uri)
        if doc is not None:
            return doc.lines
        text = await asyncio.to_thread(read_text, self.ws.path_of(uri))
        return None if text is None else split_lines(text)

    async def bytes_now(self, uri: str, limit: int | None = None) -> bytes | None:
        """The file's content as the review sees it now: the open buffer, else the disk (a file
        over `limit` bytes is refused by its size, safe.TooLarge, not read)."""
        doc = self.doc(uri)
        if doc is not None:
            return doc.text.encode("utf-8", "surrogatepass")
        return await asyncio.to_thread(read_bytes, self.ws.path_of(uri), limit)

    def client_uri(self, uri: str) -> str:
        f = self.open.get(uri)
        return f.client_uri if f is not None else uri

    def signal(self, uri: str) -> None:
        """Wake whoever waits for this document's next change."""
        event = self.doc_events.pop(uri, None)
        if event is not None:
            event.set()

    def own_write(self, path: str, text: str | None) -> None:
        """Remember what Stet itself wrote, so the watcher does not take it for an outside change."""
        self.own_writes[path] = text_hash(text)

    def counts(self) -> dict[str, int]:
        """How many hunks are in each status (every status listed)."""
        counts = {s.value: 0 for s in Status}
        for h in self.hunks.values():
            counts[h.status.value] += 1
        return counts

    def hunk_folders(self) -> set[str]:
        """The folders of the files that have hunks: where a killed write may have left a temp file."""
        folders = set()
        for uri in self.by_uri:
            try:
                folders.add(os.path.dirname(self.ws.path_of(uri)))
            except Exception:  # a uri no longer inside the workspace: nothing of Stet's to look for
                continue
        return folders

    def files_lock(self) -> str:
        """The lock file every process takes to read, check and write workspace files."""
        return os.path.join(self.require_store().home, "files.lock")
