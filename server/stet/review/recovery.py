"""Checkpoints of anchor positions, recovery at start, and shutdown."""

from __future__ import annotations

import asyncio
import logging
import os

from ..errors import StetError, StoreUnavailable
from ..faults import fault
from ..workspace import interprocess_lock, remove_temp_files
from .common import SETTLE_DELAY

log = logging.getLogger(__name__)


class RecoveryMixin:
    """Bringing memory, files and store into agreement."""

    async def checkpoint(self, uris: set[str] | None = None) -> int:
        """Persist anchor positions that moved since the last checkpoint."""
        if self.store is None:
            return 0
        moved = [
            (h.line, h.id)
            for uri in (uris if uris is not None else list(self.by_uri))
            for h in self.by_uri.get(uri, {}).values()
            if h.line != h.stored_line
        ]
        if moved:
            await self.store.save_lines(moved)
            for line, hid in moved:
                if hid in self.hunks:
                    self.hunks[hid].stored_line = line
        return len(moved)

    async def recover(self) -> dict:
        """Bring memory, files and store into agreement after a start; safe to interrupt.

        Whatever happens, requests are let through afterwards: when recovery failed they
        are answered with its error (see `recovery_error`), never left waiting."""
        try:
            return await self._recover()
        except BaseException as exc:
            self.recovery_error = exc if isinstance(exc, StetError) else StoreUnavailable(
                f"Stet could not restore the review: {exc!r}. Restart Stet; `stet doctor` explains more."
            )
            self.ready.set()
            raise

    async def _recover(self) -> dict:
        loop = asyncio.get_running_loop()
        started = loop.time()
        fault("recover:start")
        store = self._store()
        await self.sync()
        folders = set()
        for uri in self.by_uri:
            try:
                folders.add(os.path.dirname(self.ws.resolve(uri)))
            except Exception:
                continue
        # Under the files lock: a temp file of another process's write in progress is not a leftover.
        async with interprocess_lock(self._files_lock()):
            await asyncio.to_thread(remove_temp_files, folders)
        effects = await store.open_effects()
        self.effect_uris.update(e.uri for e in effects if e.state == "pending")
        await self.run_pending_effects(states=("pending",), targets=("file",))
        await self._relocate_on_disk([u for u in self.by_uri if u not in self.docs])
        fault("recover:after-relocate")
        await self.checkpoint()
        self.ready.set()
        if any(e.state == "unsaved" or e.target == "buffer" for e in effects):
            # Edits meant for (or living in) an editor's buffer: if the editor is still there it
            # re-opens its buffers right after start; give it a moment, then settle what is left
            # in the buffer if it came back, else on disk.
            self._later("settle-buffers", SETTLE_DELAY, self._settle_buffers)
        counts = self.counts()
        files = len({h.uri for h in self.hunks.values() if h.is_open})
        return {"files": files, "counts": counts, "durationMs": round((loop.time() - started) * 1000, 1)}

    async def _settle_buffers(self) -> None:
        await self.run_pending_effects(states=("pending", "unsaved"), targets=("buffer",))
        await self.run_pending_effects(states=("unsaved",), targets=("file",))

    async def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()
        if self.store is not None:
            try:
                await self.checkpoint()
            except Exception as exc:
                log.warning("checkpoint at shutdown failed: %s", exc)
            await self.store.close()
            self.store = None

