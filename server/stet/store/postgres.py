"""The store in PostgreSQL: one database (or one schema of it, named by the url's
`options=-csearch_path=...`) holds one repository's review, shared by every process of every
machine that can reach it. Same tables, same statements, same Tx as the SQLite engine (see
pgconn.py for what differs underneath); what only a file has (identity checks, quarantine,
the -wal) has no counterpart here.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from typing import Any, cast

import aiosqlite

from ..errors import StoreUnavailable
from .pgconn import Listener, PgConn, PgRaw, migrate, shown, unreachable
from .rows import now_iso
from .sqlite import OpenResult, Store


class PgStore(Store):
    engine = "postgresql"

    def __init__(self, conn: PgConn, url: str, home: str):
        super().__init__(cast(aiosqlite.Connection, conn), shown(url))
        self.url = url  # with its credentials: never shown (`path` is the masked url)
        self.home = home
        self.listener = Listener(url, conn._conn.backend_pid)

    @classmethod
    async def open_url(cls, url: str, home: str, root: str) -> OpenResult:
        """Connect, bring the schema up to date, attach the checkout at `root` and start
        listening; raises StoreUnavailable. `home`: this checkout's own folder for what stays
        on its machine (inbox, files lock, snapshots), the workspace's `.stet/`."""
        conn = PgConn(url)
        try:
            await conn._execute(lambda raw: migrate(raw, shown(url)), conn._conn)
            await conn._execute(lambda raw: attach(raw, shown(url), socket.gethostname(), root), conn._conn)
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


def attach(raw: PgRaw, where: str, host: str, root: str) -> None:
    """Register this checkout (host, root) with the review, or refuse it: a review stored in
    PostgreSQL keeps the paths, the effects journal and the file stamps of one checkout, as an
    SQLite store does, so a second checkout (another machine, or another folder) must not open
    it: its processes would judge and write the first checkout's files from its own. Every
    process of the attached checkout (editor windows, the CLI, MCP) shares it freely."""
    conn = raw._live()
    with raw.errors():
        conn.execute("BEGIN")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(1937007988, hashtext(current_schema()))")
            rows = conn.execute("SELECT host, root FROM stet_checkouts").fetchall()
            others = [(h, r) for h, r in rows if (h, r) != (host, root)]
            if others:
                h, r = others[0]
                raise StoreUnavailable(
                    f"the review in {where} belongs to the checkout {r} on {h}; this one is {root} on {host}. "
                    "A review in PostgreSQL serves one checkout (every editor window, `stet` command and "
                    "`stet mcp` of it, from anywhere that checkout is): give this checkout its own database "
                    "(or schema: options=-csearch_path=NAME in the url). Nothing was changed."
                )
            at = now_iso()
            conn.execute(
                "INSERT INTO stet_checkouts (host, root, first_seen, last_seen) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (host, root) DO UPDATE SET last_seen = EXCLUDED.last_seen",
                (host, root, at, at),
            )
            conn.execute("COMMIT")
        except BaseException:
            if not conn.closed:
                conn.execute("ROLLBACK")
            raise
