"""The store in PostgreSQL: one database (or one schema of it, named by the url's
`options=-csearch_path=...`) holds one repository's review, shared by every process of every
machine that can reach it. The same tables as the SQLite engine's, its own statements
(pg_sql.py) and connection (pgconn.py), under the same transaction code (tx.py); what only a
file has (identity checks, quarantine, the -wal) has no counterpart here.
"""

from __future__ import annotations

import asyncio
import socket

from ..errors import StoreUnavailable
from . import pg_sql as sql
from . import relocation
from .base import OpenResult, SqlStore
from .errors import StoreError
from .pg_sql import LOCK, POSTGRES
from .pgconn import Listener, PgLink, PgRaw, migrate, unreachable
from .pgurl import shown
from .roots import Roots
from .rows import now_iso
from .sqlite import prepare_home


class PgStore(SqlStore):
    engine = "postgresql"

    def __init__(self, link: PgLink, url: str, home: str, roots: Roots):
        super().__init__(link, POSTGRES, shown(url), home, roots)
        self.pg = link
        self.url = url  # with its credentials: never shown (`path` is the masked url)
        self.listener = Listener(url, link.raw.backend_pid)

    @classmethod
    async def open_url(cls, url: str, home: str, root: str, root_uris: list[str], repository: str | None) -> OpenResult:
        """Connect, bring the schema up to date, attach this checkout (`root`, its first root's
        folder; `root_uris` its roots' uris as the workspace writes them, first first) to the
        review of `repository` and start listening; raises StoreUnavailable. `home`: this
        checkout's own folder for what stays on its machine (inbox, files lock, snapshots), the
        workspace's `.stet/`."""
        host = socket.gethostname()
        link = PgLink(url, f"{host}:{root}")
        try:
            await link.call(lambda raw: migrate(raw, shown(url), root_uris))
            await link.call(lambda raw: attach(raw, shown(url), host, root, repository))
            roots = await link.call(lambda raw: relocation.settle(raw, POSTGRES, root_uris))
        except StoreError as exc:
            link.stop()
            raise unreachable(url, exc) from None
        except BaseException:
            link.stop()
            raise
        try:
            prepare_home(home)
        except BaseException:
            link.stop()
            raise
        link.set_roots(roots)
        # The LISTEN connection is made when someone follows the store (data_version): a
        # command that opens it, works and exits never needs one.
        return OpenResult(cls(link, url, home, roots), None)

    async def check(self) -> None:
        """Nothing of a file to lose: the server keeps the store. Only a store this process
        gave up on (never, today) refuses."""
        if self.lost is not None:
            raise self.lost

    async def data_version(self) -> int:
        """Grows with every commit to this repository (LISTEN/NOTIFY): `follow.py` syncs when it
        changed, without asking the database."""
        self.listener.start()
        if self.listener.error is not None:
            raise StoreUnavailable(f"live sync with {self.path}: {self.listener.error}")
        return self.listener.version

    async def next_change(self, version: int, timeout: float) -> int:
        """`data_version` once it is no longer `version`, or as it is after `timeout` seconds:
        woken by the LISTEN connection's notification, never by asking the database."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        changed = self.listener.changed
        while True:
            now = await self.data_version()
            left = end - loop.time()
            if now != version or left <= 0:
                return now
            changed.clear()
            if self.listener.version == version:
                try:
                    await asyncio.wait_for(changed.wait(), left)
                except TimeoutError:
                    pass

    async def integrity(self) -> list[str]:
        async with self._lock:
            try:
                await self.pg.call(lambda raw: raw.execute(sql.REACHABLE).fetchall())
            except StoreError as exc:
                return [str(exc)]
        return ["ok"]

    async def close(self) -> None:
        await self.listener.stop()
        async with self._lock:
            await self.pg.close()

    def stop_thread(self) -> None:
        self.pg.stop()


def attach(raw: PgRaw, where: str, host: str, root: str, repository: str | None) -> None:
    """Register this checkout with the review, or refuse it (nothing changed) when it is a
    checkout of another repository. The repository is named by the first checkout that
    attaches (`repository`: its git history's root commit, or STET_REPOSITORY); a review whose
    repository has no name (no git, nothing configured) serves that first checkout only."""
    conn = raw._live()
    with raw.errors():
        conn.execute(sql.BEGIN_WRITE)
        try:
            conn.execute(LOCK)
            at = now_iso()
            named = conn.execute(sql.REPOSITORY).fetchall()
            others = conn.execute(sql.OTHER_CHECKOUTS, (f"{host}:{root}",)).fetchall()
            if not named:
                conn.execute(sql.NAME_REPOSITORY, (repository, at))
            else:
                theirs = named[0][0]
                if others and (theirs is None or repository is None or theirs != repository):
                    # Said without the other checkouts' paths and hosts: they are other people's machines.
                    if theirs is None:
                        why = (
                            "its repository has no name (its first checkout had no git history and no "
                            "STET_REPOSITORY), so no other checkout can be told to be of it"
                        )
                    elif repository is None:
                        why = f"it is the review of repository {theirs}, and this checkout has no git history and no STET_REPOSITORY"
                    else:
                        why = f"it is the review of repository {theirs}, and this checkout is of {repository}"
                    raise StoreUnavailable(
                        f"this checkout ({root}) cannot attach to the review in {where}: {why}. A checkout attaches "
                        "to a review when it is a clone of the same repository (the same first commit), or when "
                        "every checkout sets the same STET_REPOSITORY; for another repository, use another database "
                        "(or schema: options=-csearch_path=NAME in the url). Nothing was changed."
                    )
            conn.execute(sql.ATTACH, (f"{host}:{root}", host, root, at, at))
            conn.execute(sql.COMMIT)
        except BaseException:
            if not conn.closed:
                conn.execute(sql.ROLLBACK)
            raise
