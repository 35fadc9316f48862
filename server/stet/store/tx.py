"""One transaction, sent to SQLite's thread in as few hops as its reads allow.

Every statement lives in a method named for its intent; nothing outside the store writes SQL.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import aiosqlite

from ..domain.model import Hunk
from ..domain.shapes import JSON
from ..domain.status import Status
from ..errors import StoreUnavailable
from .rows import (
    HUNK_COLUMNS,
    OP_BY_ID,
    OpRow,
    Params,
    Row,
    Shared,
    hunk_from_row,
    hunk_rows,
    hunk_values,
    now_iso,
    op_row,
    with_messages,
)

# A write waits this long in all for other processes' transactions before giving up.
BUSY_DEADLINE = 120.0


def on_thread(conn: aiosqlite.Connection, fn: Callable[[sqlite3.Connection], Any]) -> Awaitable[Any]:
    """Run `fn(sqlite3 connection)` on the connection's own thread: one hop for many statements.

    aiosqlite (0.22) offers no public call for this: each public method is one hop to its
    thread for one statement, and an accept made about twenty (each a thread wake-up and an
    event-loop wake-up). `Connection._execute` (queue a callable on that thread, await its
    result) and `Connection._conn` (the sqlite3 connection the thread owns) are what every one
    of aiosqlite's public methods is made of, unchanged since its early versions; the test
    suite runs every store statement through here, so a change in aiosqlite fails loudly.
    The store's lock keeps these calls in order with every other use of the connection.
    """
    return conn._execute(fn, conn._conn)  # type: ignore[no-untyped-call]


def is_busy(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)


def unavailable(path: str, exc: BaseException) -> StoreUnavailable:
    if path.startswith(("postgresql://", "postgres://")):  # (already without its password)
        return StoreUnavailable(
            f"the review store {path} cannot be used: {exc}. Check that PostgreSQL is running and "
            f"reachable; Stet connects again by itself at the next request."
        )
    return StoreUnavailable(
        f"the review store {path} cannot be used: {exc}. Check that the folder is writable "
        f"and the disk is not full, then restart Stet; `stet doctor` explains more."
    )


class _AsRaised(Exception):
    """Carries a statement's sqlite3 error out of the SQLite thread, to be raised as it is."""

    def __init__(self, exc: sqlite3.Error):
        super().__init__(str(exc))
        self.exc = exc


class Later:
    """The rows of a read made at commit time (Tx.read_at_commit)."""

    rows: list[Row] | None = None


class LaterHunks(Later):
    """Hunks read at commit time (Tx.hunks_since_at_commit), built on SQLite's thread."""

    hunks: list[Hunk] | None = None


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

    def __init__(
        self,
        conn: aiosqlite.Connection,
        begin: str = "BEGIN IMMEDIATE",
        path: str = "(store)",
        known: Mapping[str, Hunk] | None = None,
        derived: bool = False,
        messages: dict[str, str | None] | None = None,
    ):
        self._conn = conn
        self._known = known
        self._messages = messages if messages is not None else {}  # proposal id -> message (Store's)
        # A derived record (see Store.write): committed with synchronous=NORMAL, the
        # connection's FULL restored in the same hop as the COMMIT (or the ROLLBACK).
        self.derived = derived
        self._begin_sql = begin
        self._path = path
        self.begun = False  # BEGIN has run (set on SQLite's thread)
        self.sent = False  # a hop was queued: BEGIN may run even if its caller was cancelled
        self._queue: list[tuple[str, Any, bool, bool]] = []  # (sql, parameters, executemany, raw errors)
        self._next_lsn = 0
        self._next_effect = 0
        self._last_reads: list[tuple[str, Row, Later]] = []
        # Files whose hunks this transaction changes: their stamps no longer say when they
        # were last judged (see put_stamps), so the next look reads them again.
        self._unstamped: set[str] = set()

    async def _flush(self, then: Callable[[sqlite3.Connection], Any] | None = None) -> Any:
        """One hop: BEGIN if not yet, the queued writes, then `then` (a read, or the COMMIT)."""
        queue, self._queue = self._queue, []
        if not self.begun and not queue and then == self._commit_and_read:
            return None  # nothing was read or written: no transaction to commit
        write = self._begin_sql == "BEGIN IMMEDIATE"

        def run(raw: sqlite3.Connection) -> Any:
            if not self.begun:
                if self.derived:
                    raw.execute("PRAGMA synchronous=NORMAL")  # not allowed inside a transaction
                try:
                    raw.execute(self._begin_sql)
                except BaseException:
                    if self.derived:
                        raw.execute("PRAGMA synchronous=FULL")
                    raise
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
                return await on_thread(self._conn, run)
            except _AsRaised as wrapped:
                raise wrapped.exc from None
            except sqlite3.OperationalError as exc:
                # BEGIN IMMEDIATE while other processes write: each try already waited
                # busy_timeout inside SQLite; wait and try again until BUSY_DEADLINE, so
                # "database is locked" never reaches a user under contention.
                if self.begun or not is_busy(exc) or time.monotonic() >= deadline:
                    raise unavailable(self._path, exc) from None
            except sqlite3.Error as exc:
                raise unavailable(self._path, exc) from None
            await asyncio.sleep(0.05)

    def _commit_and_read(self, raw: sqlite3.Connection) -> None:
        if self._unstamped:
            raw.executemany("DELETE FROM file_stamps WHERE uri = ?", [(u,) for u in sorted(self._unstamped)])
        for sql, args, later in self._last_reads:  # after every write of the transaction
            later.rows = raw.execute(sql, args).fetchall()
            if isinstance(later, LaterHunks):
                shared = Shared(self._known)
                later.hunks = [hunk_from_row(r, shared) for r in later.rows]
                with_messages(raw, later.hunks, self._messages)
                later.rows = None
        raw.execute("COMMIT")
        if self.derived:
            raw.execute("PRAGMA synchronous=FULL")

    def rollback(self, raw: sqlite3.Connection) -> None:
        """ROLLBACK (when a transaction is open), and the connection back to synchronous=FULL."""
        try:
            if not raw.in_transaction:
                return
            raw.execute("ROLLBACK")
        finally:
            if self.derived:
                raw.execute("PRAGMA synchronous=FULL")

    def read_at_commit(self, sql: str, args: Params = ()) -> Later:
        """A read sent with the COMMIT (it sees every write of the transaction, and no other
        process can write in between): its rows are in `.rows` once the block has ended."""
        later = Later()
        self._last_reads.append((sql, tuple(args), later))
        return later

    def hunks_since_at_commit(self, lsn: int) -> LaterHunks:
        """Every hunk changed after `lsn`, this transaction's changes included, read with the
        COMMIT: what the process's next look at the store would read, without a hop of its
        own (see Memory.sync)."""
        later = LaterHunks()
        self._last_reads.append((f"SELECT {HUNK_COLUMNS} FROM hunks WHERE lsn > ? ORDER BY lsn", (lsn,), later))
        return later

    def pending_effect_at_commit(self, uri: str) -> Later:
        """Whether `uri` still has a pending effect once this transaction is committed."""
        return self.read_at_commit("SELECT 1 FROM effects WHERE state = 'pending' AND uri = ? LIMIT 1", (uri,))

    async def _all(self, sql: str, args: Params = ()) -> list[Row]:
        values = tuple(args)
        rows: list[Row] = await self._flush(lambda raw: raw.execute(sql, values).fetchall())
        return rows

    async def _run(self, sql: str, args: Params = (), raw_errors: bool = False) -> None:
        """Queue a write; its error (if any) is raised by the next read or by the commit."""
        self._queue.append((sql, tuple(args), False, raw_errors))

    async def _started(self) -> None:
        """Make sure the write lock is held (the next ids are known only then)."""
        if not self.begun:
            await self._flush()

    async def op(self, op_id: str) -> OpRow | None:
        rows = await self._all(OP_BY_ID, (op_id,))
        return op_row(rows[0]) if rows else None

    async def log(self, op_id: str, kind: str, args: JSON, result: Any = None) -> int:
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

    async def proposal(self, proposal_id: str) -> JSON | None:
        rows = await self._all(
            "SELECT id, task_id, agent, message, edit_hash, result_hash, lsn FROM proposals WHERE id = ?",
            (proposal_id,),
        )
        if not rows:
            return None
        keys = ("id", "task_id", "agent", "message", "edit_hash", "result_hash", "lsn")
        return dict(zip(keys, rows[0]))

    async def add_proposal(
        self,
        pid: str,
        task_id: str | None,
        agent: str | None,
        message: str | None,
        edit_hash: str,
        result_hash: str,
        lsn: int,
    ) -> None:
        await self._run(
            "INSERT INTO proposals (id, task_id, agent, message, edit_hash, result_hash, lsn, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (pid, task_id, agent, message, edit_hash, result_hash, lsn, now_iso()),
        )

    async def add_hunks(self, hunks: list[Hunk]) -> None:
        self._unstamped.update(h.uri for h in hunks)
        marks = ", ".join("?" * len(HUNK_COLUMNS.split(",")))
        self._queue.append(
            (f"INSERT INTO hunks ({HUNK_COLUMNS}) VALUES ({marks})", [hunk_values(h) for h in hunks], True, True)
        )

    async def hunks(self, ids: Iterable[str]) -> dict[str, Hunk]:
        ids = list(ids)
        shared = Shared(self._known)
        return {r[0]: hunk_from_row(r, shared) for r in await self._flush(lambda raw: hunk_rows(raw, ids))}

    async def op_and_hunks(self, op_id: str, ids: Iterable[str]) -> tuple[OpRow | None, dict[str, Hunk]]:
        """`op(op_id)` and `hunks(ids)` in one hop (a decision needs both before anything else)."""
        ids = list(ids)
        op_rows, rows = await self._flush(lambda raw: (raw.execute(OP_BY_ID, (op_id,)).fetchall(), hunk_rows(raw, ids)))
        shared = Shared(self._known)
        return (op_row(op_rows[0]) if op_rows else None), {r[0]: hunk_from_row(r, shared) for r in rows}

    async def hunks_where(
        self,
        *,
        uri: str | None = None,
        proposal_id: str | None = None,
        task_id: str | None = None,
        statuses: Sequence[Status] | None = None,
    ) -> list[Hunk]:
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
        shared = Shared(self._known)
        return [hunk_from_row(r, shared) for r in rows]

    async def save_hunks(self, hunks: Iterable[Hunk], judged: bool = False) -> None:
        """What a hunk's decisions change (status, line, texts given, feedback, version...), for
        many hunks in one statement: a bulk decision over 10,000 hunks is one executemany.
        `judged`: changes that judging the file's content decided (stale, found again, in the
        file or not): they keep the file's stamp, which says when it was judged."""
        hunks = list(hunks)
        rows = [
            (
                h.status.value,
                h.line,
                None if h.applied_text is None else "".join(h.applied_text),
                h.feedback,
                h.version,
                h.decided_at,
                h.lsn,
                None if h.in_file is None else int(h.in_file),
                h.problem,
                int(h.kept),
                h.id,
            )
            for h in hunks
        ]
        if not rows:
            return
        if not judged:
            self._unstamped.update(h.uri for h in hunks)
        self._queue.append(
            (
                "UPDATE hunks SET status = ?, line = ?, applied_text = ?, feedback = ?, version = ?, "
                "decided_at = ?, lsn = ?, in_file = ?, problem = ?, kept = ? WHERE id = ?",
                rows,
                True,
                False,
            )
        )

    async def move_hunks(self, old_uri: str, new_uri: str, lsn: int, except_id: str) -> None:
        self._unstamped.update((old_uri, new_uri))
        await self._run(
            "UPDATE hunks SET uri = ?, lsn = ? WHERE uri = ? AND id != ?", (new_uri, lsn, old_uri, except_id)
        )

    async def save_lines(self, lines: list[tuple[int, str]], unstamp: Iterable[str] = ()) -> None:
        """Anchor positions, (line, hunk id): not an operation (positions follow from content).
        `unstamp`: files whose positions were followed in an editor's buffer, not on disk: their
        stamps no longer say where their hunks are in the file (see put_stamps)."""
        self._unstamped.update(unstamp)
        self._queue.append(("UPDATE hunks SET line = ? WHERE id = ?", list(lines), True, True))

    async def add_effect(
        self, lsn: int, uri: str, action: str, edits: list[JSON], target: str = "file", owner: str | None = None
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
                "UPDATE effects SET state = ?, attempts = ?, owner = ? WHERE id = ?",
                (state, attempts, owner, effect_id),
            )

    async def put_stamps(self, stamps: Iterable[tuple[str, int, int, str | None]]) -> None:
        """What files were when Stet last judged their hunks: (uri, size, mtime_ns, hash).
        Put after the changes of this transaction to the file's hunks, a stamp stands (the
        file was judged as it is after them): they no longer clear it at the commit."""
        rows = list(stamps)
        self._unstamped.difference_update(r[0] for r in rows)
        if rows:
            self._queue.append(
                (
                    "INSERT OR REPLACE INTO file_stamps (uri, size, mtime_ns, hash) VALUES (?, ?, ?, ?)",
                    rows,
                    True,
                    False,
                )
            )

    async def settle_saved_effects(self, uri: str) -> None:
        """The editor saved `uri`: edits that lived in its unsaved buffer are in the file now."""
        await self._run("UPDATE effects SET state = 'done' WHERE uri = ? AND state = 'unsaved'", (uri,))
