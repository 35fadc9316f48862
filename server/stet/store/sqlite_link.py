"""SQLite under the store's transaction code (link.py): Python's sqlite3 connection, run on
aiosqlite's thread, its errors turned into the store's own (errors.py) as they happen."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import aiosqlite

from .errors import Busy, ConstraintError, StoreError
from .link import Cursor, Params, Raw, Row
from .roots import Roots
from .sqlite_sql import BEGIN_READ, BEGIN_WRITE, COMMIT, ROLLBACK, SYNC_FULL, SYNC_NORMAL

T = TypeVar("T")


def is_busy(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)


def store_error(exc: sqlite3.Error) -> StoreError:
    if isinstance(exc, sqlite3.IntegrityError):
        return ConstraintError(str(exc))
    if is_busy(exc):
        return Busy(str(exc))
    return StoreError(str(exc))


class _Read:
    """A cursor whose rows come with this process's uris (roots.py)."""

    __slots__ = ("_cur", "_read")

    def __init__(self, cur: sqlite3.Cursor, read: Callable[[Row], Row]):
        self._cur, self._read = cur, read

    def fetchall(self) -> list[Row]:
        return list(map(self._read, self._cur.fetchall()))

    def fetchone(self) -> Row | None:
        r = self._cur.fetchone()
        return None if r is None else self._read(r)

    def fetchmany(self, size: int) -> list[Row]:
        return list(map(self._read, self._cur.fetchmany(size)))

    def close(self) -> None:
        self._cur.close()

    def __iter__(self) -> Iterator[Row]:
        return map(self._read, self._cur)


class SqliteRaw:
    """The store's Raw over sqlite3 (autocommit: BEGIN and COMMIT are sent here). With `roots`,
    paths cross the store's boundary here (roots.py); without, nothing is translated (the
    migrations, relocation.py)."""

    __slots__ = ("conn", "roots")

    def __init__(self, conn: sqlite3.Connection, roots: Roots | None = None):
        self.conn = conn
        self.roots = roots

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, args: Params = ()) -> Cursor:
        roots = self.roots
        values: Any = args if isinstance(args, (tuple, list)) else tuple(args)
        if roots is not None:
            values = roots.params(values)
        try:
            cur = self.conn.execute(sql, values)
        except sqlite3.Error as exc:
            raise store_error(exc) from None
        if roots is not None:
            read = roots.reader(cur.description)
            if read is not None:
                return _Read(cur, read)
        return cur

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        if self.roots is not None:
            rows = map(self.roots.params, rows)
        try:
            self.conn.executemany(sql, rows)  # type: ignore[arg-type]
        except sqlite3.Error as exc:
            raise store_error(exc) from None

    def begin(self, write: bool, derived: bool) -> None:
        """BEGIN IMMEDIATE for a write (the write lock now: the next ids are known), BEGIN for a
        read; a derived record at synchronous=NORMAL (which is not allowed inside a transaction)."""
        if derived:
            self.execute(SYNC_NORMAL)
        try:
            self.execute(BEGIN_WRITE if write else BEGIN_READ)
        except BaseException:
            if derived:
                self.execute(SYNC_FULL)
            raise

    def commit(self, write: bool, derived: bool) -> None:
        self.execute(COMMIT)
        if derived:
            self.execute(SYNC_FULL)

    def rollback(self, derived: bool) -> None:
        try:
            if self.conn.in_transaction:
                self.execute(ROLLBACK)
        finally:
            if derived:
                self.execute(SYNC_FULL)


class SqliteLink:
    """One hop to aiosqlite's thread for many statements.

    aiosqlite (0.22) offers no public call for this: each public method is one hop to its
    thread for one statement, and an accept made about twenty (each a thread wake-up and an
    event-loop wake-up). `Connection._execute` (queue a callable on that thread, await its
    result) and `Connection._conn` (the sqlite3 connection the thread owns) are what every one
    of aiosqlite's public methods is made of, unchanged since its early versions; the test
    suite runs every store statement through here, so a change in aiosqlite fails loudly.
    The store's lock keeps these calls in order with every other use of the connection."""

    def __init__(self, conn: aiosqlite.Connection, roots: Roots):
        self.conn = conn
        self.raw = SqliteRaw(conn._conn, roots)

    def set_roots(self, roots: Roots) -> None:
        self.raw.roots = roots

    async def hop(self, fn: Callable[[Raw], T]) -> T:
        try:
            out: T = await self.conn._execute(fn, self.raw)  # type: ignore[no-untyped-call]
        except sqlite3.Error as exc:  # from a cursor's fetch, after SqliteRaw's call returned
            raise store_error(exc) from None
        return out
