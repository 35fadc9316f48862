"""Watching folders with watchdog: one Observer per process, pluggable handlers.

watchdog calls handlers on its own thread; each event is handed to the asyncio loop with
`call_soon_threadsafe`, so handlers run on the loop like everything else. When the
system's inotify limits are reached (ENOSPC / EMFILE), watching falls back to polling
with a warning instead of failing. STET_WATCH=poll forces polling.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.5


def _relay(loop: asyncio.AbstractEventLoop, callback: Callable[[FileSystemEvent], None]) -> FileSystemEventHandler:
    """A watchdog handler that hands each event to `callback` on the loop."""
    from watchdog.events import FileSystemEventHandler

    class Relay(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            try:
                loop.call_soon_threadsafe(callback, event)
            except RuntimeError:  # the loop is closed: we are shutting down
                pass

    return Relay()


class Watcher:
    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, polling: bool | None = None):
        self.loop = loop or asyncio.get_event_loop()
        self.polling = polling if polling is not None else os.environ.get("STET_WATCH") == "poll"
        self.observer: BaseObserver | None = None
        self.watches: list[tuple[str, Callable[[FileSystemEvent], None], bool]] = []
        self.warning: str | None = None

    def _new_observer(self) -> BaseObserver:
        if self.polling:
            from watchdog.observers.polling import PollingObserver

            return PollingObserver(timeout=POLL_INTERVAL)
        from watchdog.observers import Observer

        return Observer()

    def watch(self, folder: str, callback: Callable[[FileSystemEvent], None], recursive: bool = False) -> None:
        """Call `callback(event)` on the loop for every change under `folder`."""
        self.watches.append((folder, callback, recursive))
        if self.observer is not None:
            try:
                self.observer.schedule(_relay(self.loop, callback), folder, recursive=recursive)
            except OSError as exc:
                self._fall_back(exc)

    def start(self) -> None:
        observer = self.observer = self._new_observer()
        try:
            for folder, callback, recursive in self.watches:
                observer.schedule(_relay(self.loop, callback), folder, recursive=recursive)
            observer.start()
        except OSError as exc:
            self._fall_back(exc)

    def _fall_back(self, exc: OSError) -> None:
        if self.polling:
            raise exc
        self.warning = (
            f"Stet cannot watch files with inotify ({exc.strerror or exc}); it polls every {POLL_INTERVAL}s "
            "instead. Raise fs.inotify.max_user_watches / max_user_instances to fix this."
        )
        log.warning("%s", self.warning)
        self.stop()
        self.polling = True
        self.start()

    def stop(self) -> None:
        observer, self.observer = self.observer, None
        if observer is None:
            return
        # watchdog logs an error when an emitter thread sees an event while stopping: harmless here.
        logging.getLogger("watchdog.observers.inotify").setLevel(logging.CRITICAL)
        try:
            observer.stop()
            if observer.is_alive():
                observer.join(timeout=2)
        except Exception as exc:  # stopping must never take the server down
            log.debug("stopping the watcher: %s", exc)
