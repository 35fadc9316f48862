"""The store in PostgreSQL: one database (or one schema of it, named by the url's
`options=-csearch_path=...`) holds one repository's review, shared by every process of every
machine that can reach it. Same tables, same statements, same Tx as the SQLite engine (see
pgconn.py for what differs underneath); what only a file has (identity checks, quarantine,
the -wal) has no counterpart here.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any, cast

import aiosqlite

from ..errors import StoreUnavailable
from .pgconn import Listener, PgConn, migrate, shown, unreachable
from .sqlite import OpenResult, Store


class PgStore(Store):
    engine = "postgresql"

    def __init__(self, conn: PgConn, url: str, home: str):
        super().__init__(cast(aiosqlite.Connection, conn), shown(url))
        self.url = url  # with its credentials: never shown (`path` is the masked url)
        self.home = home
        self.listener = Listener(url, conn._conn.backend_pid)

    @classmethod
    async def open_url(cls, url: str, home: str) -> OpenResult:
        """Connect, bring the schema up to date and start listening; raises StoreUnavailable.
        `home`: this checkout's own folder for what stays on its machine (inbox, files lock,
        snapshots), the workspace's `.stet/`."""
        conn = PgConn(url)
        try:
            await conn._execute(lambda raw: migrate(raw, shown(url)), conn._conn)
        except sqlite3.Error as exc:
            conn.stop()
            raise unreachable(url, exc) from None
        except BaseException:
            conn.stop()
            raise
        os.makedirs(home, mode=0o700, exist_ok=True)
        store = cls(conn, url, home)
        store.listener.start()
        return OpenResult(store, None)

    async def check(self) -> None:
        """Nothing of a file to lose: the server keeps the store. Only a store this process
        gave up on (never, today) refuses."""
        if self.lost is not None:
            raise self.lost

    async def _check_held(self) -> None:
        await self.check()

    async def data_version(self) -> int:
        """Grows with every commit to this repository (LISTEN/NOTIFY): `follow.py` syncs when it
        changed, without asking the database."""
        self.listener.start()
        if self.listener.error is not None:
            raise StoreUnavailable(f"live sync with {self.path}: {self.listener.error}")
        return self.listener.version

    async def integrity(self) -> list[str]:
        try:
            await self.conn.execute_fetchall("SELECT 1 FROM stet_schema")
        except sqlite3.Error as exc:
            return [str(exc)]
        return ["ok"]

    async def close(self) -> None:
        await self.listener.stop()
        async with self._lock:
            await self.conn.close()

    def stop_thread(self) -> None:
        cast(Any, self.conn).stop()
