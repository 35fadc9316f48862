"""Recovery at start (safe to interrupt), and shutdown."""

from __future__ import annotations

import asyncio
import logging

from ..domain.effect_outcome import State
from ..domain.recovered import Recovered
from ..errors import StetError, StoreUnavailable
from ..faults import fault
from ..workspace.files import remove_temp_files
from ..workspace.locks import interprocess_lock
from .config import SETTLE_DELAY
from .effects import Effects
from .memory import Memory
from .outside_changes import OutsideChanges
from .state import ReviewState

log = logging.getLogger(__name__)


class Recovery:
    """Bringing memory, files and store into agreement."""

    def __init__(self, state: ReviewState, memory: Memory, effects: Effects, outside: OutsideChanges):
        self.st = state
        self.memory = memory
        self.effects = effects
        self.outside = outside

    async def recover(self) -> Recovered:
        """Bring memory, files and store into agreement after a start; safe to interrupt.

        Whatever happens, requests are let through afterwards: when recovery failed they
        are answered with its error (see `recovery_error`), never left waiting. Run again
        (the store could not be reached the first time), requests wait for it again."""
        st = self.st
        st.recovery_error = None
        st.ready.clear()
        try:
            return await self._recover()
        except BaseException as exc:
            st.recovery_error = (
                exc
                if isinstance(exc, StetError)
                else StoreUnavailable(
                    f"Stet could not restore the review: {exc!r}. Restart Stet; `stet doctor` explains more."
                )
            )
            st.ready.set()
            raise

    async def _recover(self) -> Recovered:
        st = self.st
        loop = asyncio.get_running_loop()
        started = loop.time()
        fault("recover:start")
        store = st.require_store()
        await self.memory.sync()
        await self.remove_leftovers()
        effects = await store.open_effects()
        st.effect_uris.update(e.uri for e in effects if e.state == State.PENDING)
        await self.effects.run_pending(states=(State.PENDING,), targets=("file",))
        await self.outside.relocate_on_disk([u for u in st.by_uri if u not in st.open])
        fault("recover:after-relocate")
        await self.memory.checkpoint()
        st.ready.set()
        if any(e.state == State.UNSAVED or e.target == "buffer" for e in effects):
            # Edits meant for (or living in) an editor's buffer: if the editor is still there it
            # re-opens its buffers right after start; give it a moment, then settle what is left
            # in the buffer if it came back, else on disk.
            st.background.later("settle-buffers", SETTLE_DELAY, self._settle_buffers)
        counts = st.counts()
        files = len({h.uri for h in st.hunks.values() if h.is_open})
        return Recovered(files, counts, round((loop.time() - started) * 1000, 1))

    async def remove_leftovers(self) -> None:
        """Delete the temp files that killed writes left beside files with hunks (Stet's own, told
        from look-alikes by their checksum): any process that opens the review does it."""
        st = self.st
        folders = st.hunk_folders()
        # Under the files lock: a temp file of another process's write in progress is not a leftover.
        async with interprocess_lock(st.files_lock()):
            await asyncio.to_thread(remove_temp_files, folders)

    async def _settle_buffers(self) -> None:
        await self.effects.run_pending(states=(State.PENDING, State.UNSAVED), targets=("buffer",))
        await self.effects.run_pending(states=(State.UNSAVED,), targets=("file",))

    async def close(self) -> None:
        st = self.st
        if st.store is not None:
            try:  # what content decided must not be lost with the background task storing it
                await self.memory.flush_derived()
            except Exception as exc:
                log.warning("storing derived states at shutdown failed: %s", exc)
        st.background.cancel_all()
        if st.store is not None:
            try:
                await self.memory.checkpoint()
            except Exception as exc:
                log.warning("checkpoint at shutdown failed: %s", exc)
            await st.store.close()
            st.store = None
