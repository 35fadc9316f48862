"""SQLite under the store's transaction code (link.py): Python's sqlite3 connection, run on
aiosqlite's thread, its errors turned into the store's own (errors.py) as they happen."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import TypeVar

import aiosqlite

from .errors import Busy, ConstraintError, StoreError
from .link import Params, Raw

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


class SqliteRaw:
    """The store's Raw over sqlite3 (autocommit: BEGIN and COMMIT are sent here)."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, args: Params = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, args if isinstance(args, (tuple, list)) else tuple(args))
        except sqlite3.Error as exc:
            raise store_error(exc) from None

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        try:
            self.conn.executemany(sql, rows)  # type: ignore[arg-type]
        except sqlite3.Error as exc:
            raise store_error(exc) from None

    def begin(self, write: bool, derived: bool) -> None:
        """BEGIN IMMEDIATE for a write (the write lock now: the next ids are known), BEGIN for a
        read; a derived record at synchronous=NORMAL (which is not allowed inside a transaction)."""
        if derived:
            self.execute("PRAGMA synchronous=NORMAL")
        try:
            self.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except BaseException:
            if derived:
                self.execute("PRAGMA synchronous=FULL")
            raise

    def commit(self, write: bool, derived: bool) -> None:
        self.execute("COMMIT")
        if derived:
            self.execute("PRAGMA synchronous=FULL")

    def rollback(self, derived: bool) -> None:
        try:
            if self.conn.in_transaction:
                self.execute("ROLLBACK")
        finally:
            if derived:
                self.execute("PRAGMA synchronous=FULL")


class SqliteLink:
    """One hop to aiosqlite's thread for many statements.

    aiosqlite (0.22) offers no public call for this: each public method is one hop to its
    thread for one statement, and an accept made about twenty (each a thread wake-up and an
    event-loop wake-up). `Connection._execute` (queue a callable on that thread, await its
    result) and `Connection._conn` (the sqlite3 connection the thread owns) are what every one
    of aiosqlite's public methods is made of, unchanged since its early versions; the test
    suite runs every store statement through here, so a change in aiosqlite fails loudly.
    The store's lock keeps these calls in order with every other use of the connection."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn
        self.raw = SqliteRaw(conn._conn)

    async def hop(self, fn: Callable[[Raw], T]) -> T:
        try:
            out: T = await self.conn._execute(fn, self.raw)  # type: ignore[no-untyped-call]
        except sqlite3.Error as exc:  # from a cursor's fetch, after SqliteRaw's call returned
            raise store_error(exc) from None
        return out
