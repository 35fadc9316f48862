"""One transaction, sent to the store's thread in as few hops as its reads allow.

Every statement is named in the engine's statement table (statements.py); nothing outside the
store writes SQL, and nothing here knows the engine: it talks to a `Link` and a `Raw`
connection (link.py) and meets only the store's own errors (errors.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..domain.effect_outcome import Action, EffectEdit, State
from ..domain.hunks import Context
from ..domain.model import Hunk
from ..domain.shapes import JSON
from ..domain.status import Status
from ..errors import StoreUnavailable
from .engines import engine_of
from .errors import Busy, ConstraintError, StoreError
from .link import Link, Raw
from .roots import AsDoc, AsUri
from .rows import (
    OpRow,
    Params,
    ProposalInfo,
    Row,
    Shared,
    hunk_from_row,
    hunk_rows,
    hunk_values,
    now_iso,
    op_row,
    with_messages,
)
from .statements import Statements

# A write waits this long in all for other processes' transactions before giving up.
BUSY_DEADLINE = 120.0


def unavailable(path: str, exc: BaseException) -> StoreUnavailable:
    if engine_of(path).reconnects:  # (`path`: a url already without its password)
        return StoreUnavailable(
            f"the review store {path} cannot be used: {exc}. Check that PostgreSQL is running and "
            f"reachable; Stet connects again by itself at the next request."
        )
    return StoreUnavailable(
        f"the review store {path} cannot be used: {exc}. Check that the folder is writable "
        f"and the disk is not full, then restart Stet; `stet doctor` explains more."
    )


class _AsRaised(Exception):
    """Carries a statement's error out of the store's thread, to be raised as it is."""

    def __init__(self, exc: StoreError):
        super().__init__(str(exc))
        self.exc = exc


class Later:
    """The rows of a read made at commit time (Tx.read_at_commit)."""

    rows: list[Row] | None = None


class LaterHunks(Later):
    """Hunks read at commit time (Tx.hunks_since_at_commit), built on the store's thread."""

    hunks: list[Hunk] | None = None


class Tx:
    """The statements available inside one transaction.

    Each hop to the store's thread costs a thread wake-up and an event-loop wake-up, so a
    transaction is sent in as few hops as its reads allow. BEGIN is sent with the first
    statement (retried while other processes hold the write lock); writes whose result nobody
    needs are queued and sent with the next read or with the COMMIT, in order; ids of new op
    log entries and effects are known once the write lock is held (nobody else can insert
    then), so `log` and `add_effect` return them without a hop of their own. Nothing is
    durable before the COMMIT either way: only the number of hops changed.
    """

    def __init__(
        self,
        link: Link,
        sql: Statements,
        *,
        write: bool,
        path: str = "(store)",
        known: Mapping[str, Hunk] | None = None,
        derived: bool = False,
        messages: dict[str, ProposalInfo] | None = None,
    ):
        self._link = link
        self.sql = sql
        self._known = known
        self._messages = messages if messages is not None else {}  # proposal id -> message, turn (Store's)
        # A derived record (see Store.write): committed without waiting for the disk where the
        # engine allows it (SQLite: synchronous=NORMAL for it, FULL again with its COMMIT).
        self.derived = derived
        self._write = write
        self._path = path
        self.begun = False  # BEGIN has run (set on the store's thread)
        self.sent = False  # a hop was queued: BEGIN may run even if its caller was cancelled
        self._queue: list[tuple[str, Any, bool, bool]] = []  # (sql, parameters, executemany, raw errors)
        self._next_lsn = 0
        self._next_effect = 0
        self._last_reads: list[tuple[str, Row, Later]] = []
        # Files whose hunks this transaction changes: their stamps no longer say when they
        # were last judged (see put_stamps), so the next look reads them again.
        self._unstamped: set[str] = set()

    def _begin(self, raw: Raw) -> None:
        raw.begin(self._write, self.derived)
        self.begun = True
        if self._write:
            self._next_lsn, self._next_effect = raw.execute(self.sql.next_ids).fetchone() or (0, 0)

    def _send(self, raw: Raw, queue: list[tuple[str, Any, bool, bool]]) -> None:
        for sql, args, many, raw_errors in queue:
            try:
                if many:
                    raw.executemany(sql, args)
                else:
                    raw.execute(sql, args)
            except StoreError as exc:
                if raw_errors or isinstance(exc, ConstraintError):
                    raise _AsRaised(exc) from None
                raise

    async def _flush(self, then: Callable[[Raw], Any] | None = None) -> Any:
        """One hop: BEGIN if not yet, the queued writes, then `then` (a read, or the COMMIT)."""
        queue, self._queue = self._queue, []
        if not self.begun and not queue and then == self._commit_and_read:
            return None  # nothing was read or written: no transaction to commit

        def run(raw: Raw) -> Any:
            if not self.begun:
                self._begin(raw)
            self._send(raw, queue)
            return then(raw) if then is not None else None

        deadline = time.monotonic() + BUSY_DEADLINE
        while True:
            try:
                self.sent = True
                return await self._link.hop(run)
            except _AsRaised as wrapped:
                raise wrapped.exc from None
            except ConstraintError:
                raise  # a unique key met, wherever it surfaced (PostgreSQL: at the hop's end)
            except Busy as exc:
                # BEGIN while other processes write: each try already waited busy_timeout
                # inside SQLite; wait and try again until BUSY_DEADLINE, so "database is
                # locked" never reaches a user under contention.
                if self.begun or time.monotonic() >= deadline:
                    raise unavailable(self._path, exc) from None
            except StoreError as exc:
                raise unavailable(self._path, exc) from None
            await asyncio.sleep(0.05)

    def _commit_and_read(self, raw: Raw) -> None:
        if self._unstamped:
            raw.executemany(self.sql.unstamp, [(AsUri(u),) for u in sorted(self._unstamped)])
        for sql, args, later in self._last_reads:  # after every write of the transaction
            later.rows = raw.execute(sql, args).fetchall()
            if isinstance(later, LaterHunks):
                shared = Shared(self._known)
                later.hunks = [hunk_from_row(r, shared) for r in later.rows]
                with_messages(raw, self.sql, later.hunks, self._messages)
                later.rows = None
        raw.commit(self._write, self.derived)

    def _rollback(self, raw: Raw) -> None:
        """ROLLBACK (when a transaction is open), and the connection as it was before BEGIN."""
        raw.rollback(self.derived)

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
        self._last_reads.append((self.sql.hunks_since, (lsn,), later))
        return later

    def pending_effect_at_commit(self, uri: str) -> Later:
        """Whether `uri` still has a pending effect once this transaction is committed."""
        return self.read_at_commit(self.sql.pending_effect, (AsUri(uri),))

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
        rows = await self._all(self.sql.op_by_id, (op_id,))
        return op_row(rows[0]) if rows else None

    async def log(self, op_id: str, kind: str, args: JSON, result: Any = None) -> int:
        await self._started()
        self._next_lsn += 1
        lsn = self._next_lsn
        await self._run(
            self.sql.log_op,
            (
                lsn,
                op_id,
                kind,
                AsDoc(json.dumps(args)),
                AsDoc(None if result is None else json.dumps(result)),
                now_iso(),
            ),
            raw_errors=True,
        )
        return lsn

    async def set_result(self, lsn: int, result: Any) -> None:
        await self._run(self.sql.set_result, (AsDoc(json.dumps(result)), lsn))

    async def proposal(self, proposal_id: str) -> JSON | None:
        rows = await self._all(self.sql.proposal, (proposal_id,))
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
        await self._run(self.sql.add_proposal, (pid, task_id, agent, message, edit_hash, result_hash, lsn, now_iso()))

    async def add_hunks(self, hunks: list[Hunk]) -> None:
        self._unstamped.update(h.uri for h in hunks)
        self._queue.append((self.sql.add_hunks, [hunk_values(h) for h in hunks], True, True))
        if self.sql.put_in_file is not None:
            rows = [(h.id, int(h.in_file)) for h in hunks if h.in_file is not None]
            if rows:
                self._queue.append((self.sql.put_in_file, rows, True, True))

    async def hunks(self, ids: Iterable[str]) -> dict[str, Hunk]:
        ids = list(ids)
        shared = Shared(self._known)
        return {r[0]: hunk_from_row(r, shared) for r in await self._flush(lambda raw: hunk_rows(raw, self.sql, ids))}

    async def op_and_hunks(self, op_id: str, ids: Iterable[str]) -> tuple[OpRow | None, dict[str, Hunk]]:
        """`op(op_id)` and `hunks(ids)` in one hop (a decision needs both before anything else)."""
        ids = list(ids)
        sql = self.sql
        op_rows, rows = await self._flush(
            lambda raw: (raw.execute(sql.op_by_id, (op_id,)).fetchall(), hunk_rows(raw, sql, ids))
        )
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
        mark = self.sql.mark
        where, args = [], []
        for column, value in (("uri", uri), ("proposal_id", proposal_id), ("task_id", task_id)):
            if value is not None:
                where.append(f"{column} = {mark}")
                args.append(AsUri(value) if column == "uri" else value)
        if statuses:
            where.append(f"status IN ({self.sql.marks(len(statuses))})")
            args.extend(s.value for s in statuses)
        sql = self.sql.hunks_select
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
                h.by_commit,
                h.id,
            )
            for h in hunks
        ]
        if not rows:
            return
        if not judged:
            self._unstamped.update(h.uri for h in hunks)
        self._queue.append((self.sql.save_hunks, rows, True, False))
        if self.sql.put_in_file is not None:
            self._queue.append((self.sql.put_in_file, [(r[11], r[7]) for r in rows], True, False))

    async def set_parts(self, hunk_id: str, parts: tuple[str, str]) -> None:
        """A hunk split into a part decided and the rest (saved with its status by save_hunks)."""
        await self._run(self.sql.set_parts, (json.dumps(list(parts)), hunk_id), raw_errors=True)

    async def move_hunks(self, old_uri: str, new_uri: str, lsn: int, except_id: str) -> None:
        self._unstamped.update((old_uri, new_uri))
        await self._run(self.sql.move_hunks, (AsUri(new_uri), lsn, AsUri(old_uri), except_id))

    async def save_lines(self, lines: list[tuple[int, str]], lsn: int, unstamp: Iterable[str] = ()) -> None:
        """Anchor positions, (line, hunk id), moved by operation `lsn` of this transaction: every
        process that holds the review follows the rows changed since the last lsn it saw, so a
        position written without one would never reach it. `unstamp`: files whose positions were
        followed in an editor's buffer, not on disk: their stamps no longer say where their
        hunks are in the file (see put_stamps)."""
        self._unstamped.update(unstamp)
        if lines:
            self._queue.append((self.sql.save_lines, [(line, lsn, hid) for line, hid in lines], True, True))

    async def save_contexts(self, contexts: Mapping[str, tuple[Context, Context]], lsn: int) -> None:
        """Hunks' context lines (hunk id -> before, after), taken again from the text after Stet
        wrote next to them (domain/neighbours.py), under the operation `lsn` that wrote it (so
        that every process that follows the log reads them again)."""
        rows = [(json.dumps(before), json.dumps(after), lsn, hid) for hid, (before, after) in contexts.items()]
        if rows:
            self._queue.append((self.sql.save_contexts, rows, True, True))

    async def add_effect(
        self,
        lsn: int,
        uri: str,
        action: Action,
        edits: list[EffectEdit],
        target: str = "file",
        owner: str | None = None,
    ) -> int:
        await self._started()
        self._next_effect += 1
        eid = self._next_effect
        await self._run(
            self.sql.add_effect,
            (eid, lsn, AsUri(uri), action.value, AsDoc(json.dumps(edits)), target, owner, now_iso()),
            raw_errors=True,
        )
        return eid

    async def set_effect(self, effect_id: int, state: State, attempts: int, owner: str | None = None) -> None:
        if owner is None:
            await self._run(self.sql.set_effect, (state.value, attempts, effect_id))
        else:
            await self._run(self.sql.set_effect_owner, (state.value, attempts, owner, effect_id))

    async def put_stamps(self, stamps: Iterable[tuple[str, int, int, str | None]]) -> None:
        """What files were when Stet last judged their hunks: (uri, size, mtime_ns, hash).
        Put after the changes of this transaction to the file's hunks, a stamp stands (the
        file was judged as it is after them): they no longer clear it at the commit."""
        rows = list(stamps)
        self._unstamped.difference_update(r[0] for r in rows)
        if rows:
            self._queue.append((self.sql.put_stamps, [(AsUri(r[0]), *r[1:]) for r in rows], True, False))

    async def settle_saved_effects(self, uri: str) -> None:
        """The editor saved `uri`: edits that lived in its unsaved buffer are in the file now."""
        await self._run(self.sql.settle_saved_effects, (AsUri(uri),))
