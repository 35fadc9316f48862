"""Re-checking closed files that changed since Stet last looked at them.

Every process that opens the store does this first (the CLI, MCP, a server at start), so
`pending`, `stale` and `inFile` are right without a server watching: each file with hunks
is compared with its stamp (size and mtime, then a hash only when those differ), and only
the files whose content changed are read and their hunks judged again.
"""

from __future__ import annotations

import asyncio

from ..domain.status import OPEN, Status
from ..errors import StetError
from ..workspace import owners
from .outside_changes import OutsideChanges
from .stamps import Stamp, hash_of, stat_of
from .state import ReviewState

# The hunks whose standing depends on the file's content.
JUDGED = OPEN | {Status.APPLIED}


class Recheck:
    def __init__(self, state: ReviewState, outside: OutsideChanges):
        self.st = state
        self.outside = outside

    async def changed_files(self) -> set[str]:
        """Judge again the hunks of closed files whose content changed; returns those uris."""
        st = self.st
        store = st.require_store()
        uris = {
            uri
            for uri, hunks in st.by_uri.items()
            if uri not in st.open and st.ws.holds(uri) and any(h.status in JUDGED for h in hunks.values())
        }
        if not uris:
            return set()
        # A file whose edit lives in a live editor's unsaved buffer: that buffer is the document.
        for effect in await store.open_effects():
            if effect.owner and effect.owner != owners.token() and owners.alive(effect.owner):
                uris.discard(effect.uri)
        stamps = await store.stamps()
        # An applied hunk never judged here (decided in another checkout of a shared review, or
        # whose judging was skipped while its own decision was in flight): its file's stamp
        # says nothing about it, so the file is judged whatever the stamp says.
        for uri in [u for u in uris if u in stamps]:
            if any(h.status == Status.APPLIED and h.in_file is None for h in st.by_uri[uri].values()):
                del stamps[uri]
        # A stat of each file here (a hundred take less than a hop to a thread); only the
        # files whose stat differs from their stamp are hashed, on a thread.
        changed, touched = self._stat(sorted(uris), stamps)
        same: list[Stamp] = []
        if touched:
            more, same = await asyncio.to_thread(self._hash, touched, stamps)
            changed += more
        if changed:
            await self.outside.relocate_on_disk(changed)
        if same:
            await store.put_stamps(same)
        return set(changed)

    def _stat(
        self, uris: list[str], stamps: dict[str, tuple[int, int, str | None]]
    ) -> tuple[list[str], list[tuple[str, str, tuple[int, int]]]]:
        """(uris that cannot be looked at: judged again, (uri, path, stat) of files whose stat
        is not their stamp's)."""
        changed: list[str] = []
        touched: list[tuple[str, str, tuple[int, int]]] = []
        for uri in uris:
            old = stamps.get(uri)
            try:
                path = self.st.ws.path_of(uri)
                now = stat_of(path)
            except (StetError, OSError):
                changed.append(uri)
                continue
            if old is None or old[:2] != now[:2]:
                touched.append((uri, path, now))
        return changed, touched

    @staticmethod
    def _hash(
        touched: list[tuple[str, str, tuple[int, int]]], stamps: dict[str, tuple[int, int, str | None]]
    ) -> tuple[list[str], list[Stamp]]:
        """(uris whose content changed, fresh stamps of files touched but unchanged)."""
        changed: list[str] = []
        same: list[Stamp] = []
        for uri, path, now in touched:
            old = stamps.get(uri)
            try:
                digest = hash_of(path)
            except (StetError, OSError):  # a symlink or a FIFO now: judged again (and found blocked)
                changed.append(uri)
                continue
            if old is not None and old[2] == digest:
                same.append((uri, now[0], now[1], digest))  # touched, not changed
            else:
                changed.append(uri)
        return changed, same
