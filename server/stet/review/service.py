"""The review service: propose, decide, apply, recover. The one place where the rules meet.

Data flows one way: a request is validated against the store inside a write transaction,
the decision is committed, then its journaled effects are carried out (an edit in the
editor's buffer or an atomic write of the file), then the outcome is committed too.
Memory follows the store through `sync`, the same path for our own writes, for other
processes' writes and for recovery at start. Each part of the service lives in its own
module of this package; `Review` puts them together around one shared state.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Iterable

from ..domain.anchor import Anchors
from ..domain.document import Document
from ..domain.model import Hunk
from ..domain.status import Status
from ..errors import StetError, InvalidParams, StoreUnavailable
from ..store import Store
from ..workspace import Workspace
from .common import Editor, Limits
from .deciding import DecidingMixin
from .documents import DocumentsMixin
from .effects import EffectsMixin
from .memory import MemoryMixin
from .proposing import ProposingMixin
from .outside_changes import OutsideChangesMixin
from .recovery import RecoveryMixin

log = logging.getLogger(__name__)


class Review(MemoryMixin, ProposingMixin, DecidingMixin, EffectsMixin, DocumentsMixin, OutsideChangesMixin, RecoveryMixin):
    """One review of one workspace: the shared state below, the behaviour in the mixins."""

    def __init__(
        self,
        workspace: Workspace,
        editor: Editor,
        on_change: Callable[[set[str]], None],
        limits: Limits | None = None,
    ):
        self.ws = workspace
        self.editor = editor
        self.on_change = on_change
        self.limits = limits or Limits()
        self.store: Store | None = None
        self.store_error: StoreUnavailable | None = None
        self.hunks: dict[str, Hunk] = {}
        self.by_uri: dict[str, dict[str, Hunk]] = {}
        self.docs: dict[str, Document] = {}
        self.anchors: dict[str, Anchors] = {}
        self.client_uris: dict[str, str] = {}
        self.in_flight: set[str] = set()
        self.effect_uris: set[str] = set()  # uris with effects not finished yet
        self.seen_lsn = 0
        self.generation = 0  # bumped whenever hunks change in memory: cheap "anything new?" test
        self.ready = asyncio.Event()
        self.recovery_error: StetError | None = None
        self._op_lock = asyncio.Lock()
        self._sync_lock = asyncio.Lock()
        self._derive_lock = asyncio.Lock()
        self._derived: dict[str, tuple[Status, int, Status]] = {}
        self._doc_events: dict[str, asyncio.Event] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        self._outside: set[str] = set()
        self._own_writes: dict[str, str | None] = {}

    # --- plumbing ----------------------------------------------------------------------
    def _store(self) -> Store:
        if self.store is None:
            raise self.store_error or StoreUnavailable("the review store is not open yet")
        return self.store

    def _spawn(self, coro: Awaitable) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    def _later(self, key: str, delay: float, fn: Callable[[], Awaitable]) -> None:
        """Run `fn` once, `delay` seconds after the last call with this key (a debounce)."""
        old = self._timers.pop(key, None)
        if old:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay, lambda: (self._timers.pop(key, None), self._spawn(fn())))

    def uri_of(self, uri: str) -> str:
        return self.ws.normalize(uri)


    def _check_id(self, name: str, value: object) -> None:
        if not isinstance(value, str) or not value or len(value) > self.limits.max_id_length:
            raise InvalidParams(f"{name} must be a non-empty string of at most {self.limits.max_id_length} characters")

    # --- queries ------------------------------------------------------------------------
    def list(self, uri=None, statuses=None, proposal_id=None, task_id=None) -> list[Hunk]:
        pool: Iterable[Hunk] = self.by_uri.get(uri, {}).values() if uri is not None else self.hunks.values()
        out = [
            h
            for h in pool
            if (statuses is None or h.status in statuses)
            and (proposal_id is None or h.proposal_id == proposal_id)
            and (task_id is None or h.task_id == task_id)
        ]
        out.sort(key=lambda h: (h.uri, h.line, h.proposal_id, h.seq))
        return out

    def open_hunks(self, uri: str) -> list[Hunk]:
        return [h for h in self.list(uri) if h.is_open]

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for h in self.hunks.values():
            counts[h.status.value] += 1
        return counts

