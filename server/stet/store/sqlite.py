"""The store: one SQLite database per workspace, shared by every Stet process.

Writes happen in `async with store.write() as tx:` blocks: BEGIN IMMEDIATE ... COMMIT,
one transaction per decision, committed (WAL, synchronous=FULL) before anything is
acknowledged. Every change is stamped with the lsn of its operation-log entry, so any
process can follow what changed since the last lsn it saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiosqlite

from ..domain.model import Hunk
from ..domain.shapes import JSON
from ..errors import StoreUnavailable
from .rows import HUNK_COLUMNS, OP_BY_ID, EffectRow, OpRow, Params, Row, hunk_from_row, op_row
from .schema import MIGRATIONS, SCHEMA_VERSION
from .tx import Tx, on_thread, unavailable

BUSY_TIMEOUT_MS = int(os.environ.get("STET_BUSY_TIMEOUT_MS", "10000"))
_CORRUPT = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}


@dataclass
class OpenResult:
    store: Store
    notice: str | None  # what the user must be told (a quarantined database)


def _is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorname", "") in _CORRUPT


def quarantine(path: str) -> str:
    """Move a damaged database (and its -wal/-shm) aside, never deleting it; returns the folder."""
    folder = os.path.join(os.path.dirname(path), "quarantine", time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
    base = folder
    n = 1
    while os.path.exists(folder):
        n += 1
        folder = f"{base}-{n}"
    os.makedirs(folder)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            shutil.move(path + suffix, os.path.join(folder, os.path.basename(path) + suffix))
    return folder


def prepare_folder(db_path: str) -> None:
    folder = os.path.dirname(db_path)
    os.makedirs(folder, exist_ok=True)
    if os.path.basename(folder) == ".stet":
        ignore = os.path.join(folder, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w") as f:
                f.write("*\n")
    if not os.path.exists(db_path):
        os.close(os.open(db_path, os.O_WRONLY | os.O_CREAT, 0o600))


class Store:
    def __init__(self, conn: aiosqlite.Connection, path: str):
        self.conn = conn
        self.path = path
        self._lock = asyncio.Lock()

    # --- opening ---------------------------------------------------------------------
    @classmethod
    async def open(cls, path: str) -> OpenResult:
        notice = None
        try:
            prepare_folder(path)
        except OSError as exc:
            raise unavailable(path, exc) from None
        try:
            conn = await cls._connect(path)
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise unavailable(path, exc) from None
            folder = quarantine(path)
            notice = (
                f"Stet found its review database damaged ({exc}) and moved it to {folder}; "
                f"nothing was deleted. A fresh review store was started."
            )
            try:
                prepare_folder(path)
                conn = await cls._connect(path)
            except (OSError, sqlite3.DatabaseError) as exc2:
                raise unavailable(path, exc2) from None
        except OSError as exc:
            raise unavailable(path, exc) from None
        return OpenResult(cls(conn, path), notice)

    @staticmethod
    async def _connect(path: str) -> aiosqlite.Connection:
        conn = await aiosqlite.connect(path, isolation_level=None)
        try:
            await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            rows = await conn.execute_fetchall("PRAGMA quick_check")
            verdict = [r[0] for r in rows]
            if verdict != ["ok"]:
                err = sqlite3.DatabaseError("; ".join(map(str, verdict[:3])))
                err.sqlite_errorname = "SQLITE_CORRUPT"
                raise err
            await Store._check_version(conn, path)  # before anything writes to a newer Stet's file
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute("PRAGMA synchronous=FULL")
            await conn.execute("PRAGMA foreign_keys=ON")
            await Store._migrate(conn, path)
        except BaseException:
            await conn.close()
            raise
        return conn

    @staticmethod
    async def _check_version(conn: aiosqlite.Connection, path: str) -> None:
        version = await _pragma_int(conn, "user_version")
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"the review store {path} was written by a newer Stet (schema {version}, this one "
                f"knows {SCHEMA_VERSION}). Upgrade Stet (pip install -U stet-lsp); the store was left as it is."
            )

    @staticmethod
    async def _migrate(conn: aiosqlite.Connection, path: str) -> None:
        version = await _pragma_int(conn, "user_version")
        if version == SCHEMA_VERSION:
            return
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the write lock.
            version = await _pragma_int(conn, "user_version")
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        async with self._lock:
            await self.conn.close()

    def stop_thread(self) -> None:
        """Stop the connection's worker thread now, without waiting for the event loop.

        aiosqlite's thread is not a daemon: a process whose loop ended without `close()`
        (the client went away, an exception) would never exit."""
        self.conn.stop()

    # --- reads -------------------------------------------------------------------------
    async def _read(self, sql: str, args: Params = ()) -> list[Row]:
        async with self._lock:
            try:
                return [tuple(r) for r in await self.conn.execute_fetchall(sql, tuple(args))]
            except sqlite3.Error as exc:
                raise unavailable(self.path, exc) from None

    async def data_version(self) -> int:
        return int((await self._read("PRAGMA data_version"))[0][0])

    async def last_lsn(self) -> int:
        return int((await self._read("SELECT COALESCE(MAX(lsn), 0) FROM oplog"))[0][0])

    async def hunks_since(self, lsn: int) -> list[Hunk]:
        def load(raw: sqlite3.Connection) -> list[Hunk]:
            # Read in chunks: a first load may be 100,000 rows, and holding every raw row beside
            # the hunks built from them doubles the peak, which the process keeps as resident size.
            out: list[Hunk] = []
            cursor = raw.execute(f"SELECT {HUNK_COLUMNS} FROM hunks WHERE lsn > ? ORDER BY lsn", (lsn,))
            try:
                while rows := cursor.fetchmany(2000):
                    out.extend(hunk_from_row(r) for r in rows)
            finally:
                cursor.close()
            return out

        async with self._lock:
            try:
                hunks: list[Hunk] = await on_thread(self.conn, load)
                return hunks
            except sqlite3.Error as exc:
                raise unavailable(self.path, exc) from None

    async def open_effects(self) -> list[EffectRow]:
        rows = await self._read(
            "SELECT id, lsn, uri, action, edits, state, attempts, target, owner FROM effects "
            "WHERE state IN ('pending', 'unsaved') ORDER BY lsn, id"
        )
        return [EffectRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8]) for r in rows]

    async def hunks_done_after(self, lsn: int) -> set[str]:
        """The hunks that an effect journaled after `lsn` has already carried out (state done)."""
        rows = await self._read("SELECT edits FROM effects WHERE state = 'done' AND lsn > ?", (lsn,))
        return {e["hunkId"] for r in rows for e in json.loads(r[0])}

    async def has_pending_effect(self, uri: str) -> bool:
        rows = await self._read("SELECT 1 FROM effects WHERE state = 'pending' AND uri = ? LIMIT 1", (uri,))
        return bool(rows)

    async def proposal(self, proposal_id: str) -> JSON | None:
        rows = await self._read("SELECT id, edit_hash, result_hash, lsn FROM proposals WHERE id = ?", (proposal_id,))
        return dict(zip(("id", "edit_hash", "result_hash", "lsn"), rows[0])) if rows else None

    async def ops(self, after_lsn: int = 0, limit: int = 1000) -> list[OpRow]:
        rows = await self._read(
            "SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE lsn > ? ORDER BY lsn LIMIT ?",
            (after_lsn, limit),
        )
        return [op_row(r) for r in rows]

    async def stamps(self) -> dict[str, tuple[int, int, str | None]]:
        """uri -> (size, mtime_ns, hash) of each file when Stet last judged its hunks."""
        rows = await self._read("SELECT uri, size, mtime_ns, hash FROM file_stamps")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    async def put_stamps(self, stamps: list[tuple[str, int, int, str | None]]) -> None:
        """Record what files were when their hunks were judged (derived: recomputed if lost)."""
        if not stamps:
            return
        async with self.write() as tx:
            await tx.put_stamps(stamps)

    async def integrity(self) -> list[str]:
        return [r[0] for r in await self._read("PRAGMA integrity_check")]

    # --- writes ------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT), committed when the block ends.

        The statements are sent to SQLite's thread in as few hops as the block allows: BEGIN
        goes with the first statement, writes wait for the next read or for the COMMIT (see Tx).
        """
        async with self._lock:
            tx = Tx(self.conn, "BEGIN IMMEDIATE", self.path)
            try:
                yield tx
            except BaseException:
                if tx.sent:
                    with contextlib.suppress(sqlite3.Error):
                        await self.conn.execute("ROLLBACK")
                raise
            try:
                await tx._flush(tx._commit_and_read)
            except BaseException:
                if tx.sent:
                    with contextlib.suppress(sqlite3.Error):
                        await self.conn.execute("ROLLBACK")
                raise

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        """A consistent snapshot for several reads (a deferred transaction: takes no write lock)."""
        async with self._lock:
            tx = Tx(self.conn, "BEGIN", self.path)
            try:
                yield tx
            finally:
                if tx.sent:
                    with contextlib.suppress(sqlite3.Error):
                        await self.conn.execute("COMMIT")

    async def op(self, op_id: str) -> OpRow | None:
        rows = await self._read(OP_BY_ID, (op_id,))
        return op_row(rows[0]) if rows else None

    async def save_lines(self, lines: list[tuple[int, str]]) -> None:
        """Checkpoint anchor positions. Not an operation: positions are recomputed from content."""
        if not lines:
            return
        async with self.write() as tx:
            await tx.save_lines(lines)


async def _pragma_int(conn: aiosqlite.Connection, name: str) -> int:
    rows = list(await conn.execute_fetchall(f"PRAGMA {name}"))
    return int(rows[0][0])
