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
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable

import aiosqlite

from ..domain.model import Hunk, lines_of
from ..domain.status import Status
from ..errors import StoreUnavailable
from .schema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_MS = int(os.environ.get("STET_BUSY_TIMEOUT_MS", "10000"))
# A write waits this long in all for other processes' transactions before giving up.
BUSY_DEADLINE = 120.0
_CORRUPT = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}

HUNK_COLUMNS = (
    "id, proposal_id, task_id, seq, uri, kind, new_uri, status, line, old_text, new_text, "
    "ctx_before, ctx_after, applied_text, message, feedback, version, decided_at, lsn"
)


def _on_thread(conn: aiosqlite.Connection, fn: Callable[[sqlite3.Connection], Any]) -> Awaitable[Any]:
    """Run `fn(sqlite3 connection)` on the connection's own thread: one hop for many statements.

    aiosqlite (0.22) offers no public call for this: each public method is one hop to its
    thread for one statement, and an accept made about twenty (each a thread wake-up and an
    event-loop wake-up). `Connection._execute` (queue a callable on that thread, await its
    result) and `Connection._conn` (the sqlite3 connection the thread owns) are what every one
    of aiosqlite's public methods is made of, unchanged since its early versions; the test
    suite runs every store statement through here, so a change in aiosqlite fails loudly.
    The store's lock keeps these calls in order with every other use of the connection.
    """
    return conn._execute(fn, conn._conn)


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def _hunk_from_row(r: Any) -> Hunk:
    return Hunk(
        id=r[0],
        proposal_id=r[1],
        task_id=r[2],
        seq=r[3],
        uri=r[4],
        kind=r[5],
        new_uri=r[6],
        status=Status(r[7]),
        line=r[8],
        old=lines_of(r[9]),
        new=lines_of(r[10]),
        ctx_before=tuple(json.loads(r[11])),
        ctx_after=tuple(json.loads(r[12])),
        applied_text=None if r[13] is None else lines_of(r[13]),
        message=r[14],
        feedback=r[15],
        version=r[16],
        decided_at=r[17],
        lsn=r[18],
    )


def _hunk_values(h: Hunk) -> tuple:
    return (
        h.id,
        h.proposal_id,
        h.task_id,
        h.seq,
        h.uri,
        h.kind,
        h.new_uri,
        h.status.value,
        h.line,
        h.old_text,
        h.new_text,
        json.dumps(h.ctx_before),
        json.dumps(h.ctx_after),
        None if h.applied_text is None else "".join(h.applied_text),
        h.message,
        h.feedback,
        h.version,
        h.decided_at,
        h.lsn,
    )


@dataclass
class OpRow:
    lsn: int
    op_id: str
    kind: str
    args: dict
    result: Any
    at: str


@dataclass
class EffectRow:
    id: int
    lsn: int
    uri: str
    action: str  # apply | revert
    edits: list[dict]  # [{hunkId, line, before, after, ctxBefore, ctxAfter}]
    state: str  # pending | unsaved (applied into a buffer not saved yet) | done
    attempts: int
    target: str = "file"  # where it was meant to land when decided: an open "buffer" or the "file"
    owner: str | None = None  # the process whose editor buffer holds it (see process.py)


@dataclass
class OpenResult:
    store: "Store"
    notice: str | None  # what the user must be told (a quarantined database)


def _is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorname", "") in _CORRUPT


def _is_busy(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)


def _unavailable(path: str, exc: BaseException) -> StoreUnavailable:
    return StoreUnavailable(
        f"the review store {path} cannot be used: {exc}. Check that the folder is writable "
        f"and the disk is not full, then restart Stet; `stet doctor` explains more."
    )


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
            raise _unavailable(path, exc) from None
        try:
            conn = await cls._connect(path)
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise _unavailable(path, exc) from None
            folder = quarantine(path)
            notice = (
                f"Stet found its review database damaged ({exc}) and moved it to {folder}; "
                f"nothing was deleted. A fresh review store was started."
            )
            try:
                prepare_folder(path)
                conn = await cls._connect(path)
            except (OSError, sqlite3.DatabaseError) as exc2:
                raise _unavailable(path, exc2) from None
        except OSError as exc:
            raise _unavailable(path, exc) from None
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
                err.sqlite_errorname = "SQLITE_CORRUPT"  # type: ignore[attr-defined]
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
        version = (await conn.execute_fetchall("PRAGMA user_version"))[0][0]
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"the review store {path} was written by a newer Stet (schema {version}, this one "
                f"knows {SCHEMA_VERSION}). Upgrade Stet (pip install -U stet-lsp); the store was left as it is."
            )

    @staticmethod
    async def _migrate(conn: aiosqlite.Connection, path: str) -> None:
        version = (await conn.execute_fetchall("PRAGMA user_version"))[0][0]
        if version == SCHEMA_VERSION:
            return
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the write lock.
            version = (await conn.execute_fetchall("PRAGMA user_version"))[0][0]
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

    # --- reads -------------------------------------------------------------------------
    async def _read(self, sql: str, args: Iterable = ()) -> list:
        async with self._lock:
            try:
                return list(await self.conn.execute_fetchall(sql, tuple(args)))
            except sqlite3.Error as exc:
                raise _unavailable(self.path, exc) from None

    async def data_version(self) -> int:
        return (await self._read("PRAGMA data_version"))[0][0]

    async def last_lsn(self) -> int:
        return (await self._read("SELECT COALESCE(MAX(lsn), 0) FROM oplog"))[0][0]

    async def hunks_since(self, lsn: int) -> list[Hunk]:
        def load(raw: sqlite3.Connection) -> list[Hunk]:
            # Read in chunks: a first load may be 100,000 rows, and holding every raw row beside
            # the hunks built from them doubles the peak, which the process keeps as resident size.
            out: list[Hunk] = []
            cursor = raw.execute(f"SELECT {HUNK_COLUMNS} FROM hunks WHERE lsn > ? ORDER BY lsn", (lsn,))
            try:
                while rows := cursor.fetchmany(2000):
                    out.extend(_hunk_from_row(r) for r in rows)
            finally:
                cursor.close()
            return out

        async with self._lock:
            try:
                return await _on_thread(self.conn, load)
            except sqlite3.Error as exc:
                raise _unavailable(self.path, exc) from None

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

    async def proposal(self, proposal_id: str) -> dict | None:
        rows = await self._read("SELECT id, edit_hash, result_hash, lsn FROM proposals WHERE id = ?", (proposal_id,))
        return dict(zip(("id", "edit_hash", "result_hash", "lsn"), rows[0])) if rows else None

    async def ops(self, after_lsn: int = 0, limit: int = 1000) -> list[OpRow]:
        rows = await self._read(
            "SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE lsn > ? ORDER BY lsn LIMIT ?",
            (after_lsn, limit),
        )
        return [OpRow(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]) if r[4] else None, r[5]) for r in rows]

    async def integrity(self) -> list[str]:
        return [r[0] for r in await self._read("PRAGMA integrity_check")]

    # --- writes ------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator["Tx"]:
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
    async def read(self) -> AsyncIterator["Tx"]:
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
        rows = await self._read("SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE op_id = ?", (op_id,))
        if not rows:
            return None
        r = rows[0]
        return OpRow(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]) if r[4] else None, r[5])

    async def save_lines(self, lines: list[tuple[int, str]]) -> None:
        """Checkpoint anchor positions. Not an operation: positions are recomputed from content."""
        if not lines:
            return
        async with self.write() as tx:
            await tx.save_lines(lines)


_OP_BY_ID = "SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE op_id = ?"


def _op_row(r: Any) -> OpRow:
    return OpRow(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]) if r[4] else None, r[5])


def _hunk_rows(raw: sqlite3.Connection, ids: list[str]) -> list:
    rows = []
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        rows += raw.execute(f"SELECT {HUNK_COLUMNS} FROM hunks WHERE id IN ({', '.join('?' * len(chunk))})", chunk).fetchall()
    return rows


class _AsRaised(Exception):
    """Carries a statement's sqlite3 error out of the SQLite thread, to be raised as it is."""

    def __init__(self, exc: sqlite3.Error):
        super().__init__(str(exc))
        self.exc = exc


class Later:
    """The rows of a read made at commit time (Tx.read_at_commit)."""

    rows: list | None = None


# The ids the next rows of these AUTOINCREMENT tables get: the largest ever used, plus one.
_NEXT_IDS = (
    "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'oplog'), 0), "
    "COALESCE((SELECT MAX(lsn) FROM oplog), 0)), "
    "MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'effects'), 0), "
    "COALESCE((SELECT MAX(id) FROM effects), 0))"
)


class Tx:
    """The statements available inside one transaction.

    Each hop to SQLite's thread costs a thread wake-up and an event-loop wake-up, so a
    transaction is sent in as few hops as its reads allow. BEGIN is sent with the first
    statement (retried while other processes hold the write lock); writes whose result nobody
    needs are queued and sent with the next read or with the COMMIT, in order; ids of new op
    log entries and effects are known once the write lock is held (nobody else can insert
    then), so `log` and `add_effect` return them without a hop of their own. Nothing is
    durable before the COMMIT either way: only the number of hops changed.
    """

    def __init__(self, conn: aiosqlite.Connection, begin: str = "BEGIN IMMEDIATE", path: str = "(store)"):
        self._conn = conn
        self._begin_sql = begin
        self._path = path
        self.begun = False  # BEGIN has run (set on SQLite's thread)
        self.sent = False  # a hop was queued: BEGIN may run even if its caller was cancelled
        self._queue: list[tuple[str, Any, bool, bool]] = []  # (sql, parameters, executemany, raw errors)
        self._next_lsn = 0
        self._next_effect = 0
        self._last_reads: list[tuple[str, tuple, "Later"]] = []

    @property
    def conn(self) -> "Tx":
        """`tx.conn.execute(sql, args)` queues a statement like the methods below."""
        return self

    async def execute(self, sql: str, args: Iterable = ()) -> None:
        self._queue.append((sql, tuple(args), False, True))

    async def _flush(self, then: Callable[[sqlite3.Connection], Any] | None = None) -> Any:
        """One hop: BEGIN if not yet, the queued writes, then `then` (a read, or the COMMIT)."""
        queue, self._queue = self._queue, []
        if not self.begun and not queue and then == self._commit_and_read:
            return None  # nothing was read or written: no transaction to commit
        write = self._begin_sql == "BEGIN IMMEDIATE"

        def run(raw: sqlite3.Connection) -> Any:
            if not self.begun:
                raw.execute(self._begin_sql)
                self.begun = True
                if write:
                    self._next_lsn, self._next_effect = raw.execute(_NEXT_IDS).fetchone()
            for sql, args, many, raw_errors in queue:
                try:
                    if many:
                        raw.executemany(sql, args)
                    else:
                        raw.execute(sql, args)
                except sqlite3.Error as exc:
                    if raw_errors:
                        raise _AsRaised(exc) from None
                    raise
            return then(raw) if then is not None else None

        deadline = time.monotonic() + BUSY_DEADLINE
        while True:
            try:
                self.sent = True
                return await _on_thread(self._conn, run)
            except _AsRaised as wrapped:
                raise wrapped.exc from None
            except sqlite3.OperationalError as exc:
                # BEGIN IMMEDIATE while other processes write: each try already waited
                # busy_timeout inside SQLite; wait and try again until BUSY_DEADLINE, so
                # "database is locked" never reaches a user under contention.
                if self.begun or not _is_busy(exc) or time.monotonic() >= deadline:
                    raise _unavailable(self._path, exc) from None
            except sqlite3.Error as exc:
                raise _unavailable(self._path, exc) from None
            await asyncio.sleep(0.05)

    def _commit_and_read(self, raw: sqlite3.Connection) -> None:
        for sql, args, later in self._last_reads:  # after every write of the transaction
            later.rows = raw.execute(sql, args).fetchall()
        raw.execute("COMMIT")

    def read_at_commit(self, sql: str, args: Iterable = ()) -> "Later":
        """A read sent with the COMMIT (it sees every write of the transaction, and no other
        process can write in between): its rows are in `.rows` once the block has ended."""
        later = Later()
        self._last_reads.append((sql, tuple(args), later))
        return later

    def pending_effect_at_commit(self, uri: str) -> "Later":
        """Whether `uri` still has a pending effect once this transaction is committed."""
        return self.read_at_commit("SELECT 1 FROM effects WHERE state = 'pending' AND uri = ? LIMIT 1", (uri,))

    async def _all(self, sql: str, args: Iterable = ()) -> list:
        args = tuple(args)
        return await self._flush(lambda raw: raw.execute(sql, args).fetchall())

    async def _run(self, sql: str, args: Iterable = (), raw_errors: bool = False) -> None:
        """Queue a write; its error (if any) is raised by the next read or by the commit."""
        self._queue.append((sql, tuple(args), False, raw_errors))

    async def _started(self) -> None:
        """Make sure the write lock is held (the next ids are known only then)."""
        if not self.begun:
            await self._flush()

    async def op(self, op_id: str) -> OpRow | None:
        rows = await self._all(_OP_BY_ID, (op_id,))
        return _op_row(rows[0]) if rows else None

    async def log(self, op_id: str, kind: str, args: dict, result: Any = None) -> int:
        await self._started()
        self._next_lsn += 1
        lsn = self._next_lsn
        await self._run(
            "INSERT INTO oplog (lsn, op_id, kind, args, result, at) VALUES (?, ?, ?, ?, ?, ?)",
            (lsn, op_id, kind, json.dumps(args), None if result is None else json.dumps(result), now_iso()),
            raw_errors=True,
        )
        return lsn

    async def set_result(self, lsn: int, result: Any) -> None:
        await self._run("UPDATE oplog SET result = ? WHERE lsn = ?", (json.dumps(result), lsn))

    async def proposal(self, proposal_id: str) -> dict | None:
        rows = await self._all(
            "SELECT id, task_id, agent, message, edit_hash, result_hash, lsn FROM proposals WHERE id = ?",
            (proposal_id,),
        )
        if not rows:
            return None
        keys = ("id", "task_id", "agent", "message", "edit_hash", "result_hash", "lsn")
        return dict(zip(keys, rows[0]))

    async def add_proposal(self, pid: str, task_id, agent, message, edit_hash: str, result_hash: str, lsn: int) -> None:
        await self._run(
            "INSERT INTO proposals (id, task_id, agent, message, edit_hash, result_hash, lsn, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (pid, task_id, agent, message, edit_hash, result_hash, lsn, now_iso()),
        )

    async def add_hunks(self, hunks: list[Hunk]) -> None:
        marks = ", ".join("?" * len(HUNK_COLUMNS.split(",")))
        self._queue.append((f"INSERT INTO hunks ({HUNK_COLUMNS}) VALUES ({marks})", [_hunk_values(h) for h in hunks], True, True))

    async def hunks(self, ids: Iterable[str]) -> dict[str, Hunk]:
        ids = list(ids)
        return {r[0]: _hunk_from_row(r) for r in await self._flush(lambda raw: _hunk_rows(raw, ids))}

    async def op_and_hunks(self, op_id: str, ids: Iterable[str]) -> tuple[OpRow | None, dict[str, Hunk]]:
        """`op(op_id)` and `hunks(ids)` in one hop (a decision needs both before anything else)."""
        ids = list(ids)
        op_rows, rows = await self._flush(lambda raw: (raw.execute(_OP_BY_ID, (op_id,)).fetchall(), _hunk_rows(raw, ids)))
        return (_op_row(op_rows[0]) if op_rows else None), {r[0]: _hunk_from_row(r) for r in rows}

    async def hunks_where(self, *, uri=None, proposal_id=None, task_id=None, statuses=None) -> list[Hunk]:
        where, args = [], []
        for column, value in (("uri", uri), ("proposal_id", proposal_id), ("task_id", task_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if statuses:
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            args.extend(s.value for s in statuses)
        sql = f"SELECT {HUNK_COLUMNS} FROM hunks"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = await self._all(sql + " ORDER BY uri, line, seq", args)
        return [_hunk_from_row(r) for r in rows]

    async def save_hunk(self, h: Hunk) -> None:
        await self._run(
            "UPDATE hunks SET status = ?, line = ?, applied_text = ?, feedback = ?, version = ?, "
            "decided_at = ?, lsn = ? WHERE id = ?",
            (
                h.status.value,
                h.line,
                None if h.applied_text is None else "".join(h.applied_text),
                h.feedback,
                h.version,
                h.decided_at,
                h.lsn,
                h.id,
            ),
        )

    async def move_hunks(self, old_uri: str, new_uri: str, lsn: int, except_id: str) -> None:
        await self._run(
            "UPDATE hunks SET uri = ?, lsn = ? WHERE uri = ? AND id != ?", (new_uri, lsn, old_uri, except_id)
        )

    async def save_lines(self, lines: list[tuple[int, str]]) -> None:
        """Anchor positions, (line, hunk id): not an operation (positions follow from content)."""
        self._queue.append(("UPDATE hunks SET line = ? WHERE id = ?", list(lines), True, True))

    async def add_effect(
        self, lsn: int, uri: str, action: str, edits: list[dict], target: str = "file", owner: str | None = None
    ) -> int:
        await self._started()
        self._next_effect += 1
        eid = self._next_effect
        await self._run(
            "INSERT INTO effects (id, lsn, uri, action, edits, state, target, owner, at) "
            "VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
            (eid, lsn, uri, action, json.dumps(edits), target, owner, now_iso()),
            raw_errors=True,
        )
        return eid

    async def set_effect(self, effect_id: int, state: str, attempts: int, owner: str | None = None) -> None:
        if owner is None:
            await self._run("UPDATE effects SET state = ?, attempts = ? WHERE id = ?", (state, attempts, effect_id))
        else:
            await self._run(
                "UPDATE effects SET state = ?, attempts = ?, owner = ? WHERE id = ?", (state, attempts, owner, effect_id)
            )
