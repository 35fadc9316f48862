"""What both engines' stores do alike, over their own link and statements: the reads outside a
transaction, and the `write()` / `read()` blocks. `Store` (SQLite, sqlite.py) and `PgStore`
(PostgreSQL, postgres.py) are siblings on this: each opens, checks and closes its own way."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass

from ..domain.model import Hunk
from ..domain.shapes import JSON
from ..errors import StoreLost
from .api import StoreApi
from .errors import StoreError
from .link import Link, Raw
from .roots import AsUri, Roots
from .rows import (
    EffectRow,
    OpRow,
    Params,
    ProposalInfo,
    Row,
    Shared,
    effect_row,
    hunk_from_row,
    op_row,
    with_messages,
)
from .statements import Statements
from .tx import Tx, unavailable


@dataclass
class OpenResult:
    store: StoreApi
    notice: str | None  # what the user must be told (a quarantined database)


class SqlStore:
    engine = "sql"

    def __init__(self, link: Link, sql: Statements, path: str, home: str, roots: Roots):
        self._link = link
        self.sql = sql
        self.path = path  # what messages name: the file, or PostgreSQL's url without its password
        self.home = home  # this checkout's folder for what stays local (inbox, lock)
        self.roots = roots  # where the paths it keeps are read and written (roots.py)
        self._lock = asyncio.Lock()
        # The hunks the process using this store holds, by id: rows read again borrow their
        # parts that never change (see rows.Shared) instead of parsing and keeping a copy.
        self.known: Mapping[str, Hunk] = {}
        self._messages: dict[str, ProposalInfo] = {}  # proposal id -> its message and turn (never change)
        self.lost: StoreLost | None = None  # set once: this process acknowledges nothing more
        self.on_lost: Callable[[StoreLost], None] | None = None  # told once, when it happens

    async def _check_held(self) -> None:
        """Refuse when the store was lost (for a caller that holds the store's lock)."""
        if self.lost is not None:
            raise self.lost

    # --- reads -------------------------------------------------------------------------
    async def _read(self, sql: str, args: Params = ()) -> list[Row]:
        values = tuple(args)
        async with self._lock:
            try:
                rows: list[Row] = await self._link.hop(lambda raw: raw.execute(sql, values).fetchall())
            except StoreError as exc:
                raise unavailable(self.path, exc) from None
        return rows

    async def last_lsn(self) -> int:
        return int((await self._read(self.sql.last_lsn))[0][0])

    async def hunks_since(self, lsn: int) -> list[Hunk]:
        sql = self.sql

        def load(raw: Raw) -> list[Hunk]:
            # Read in chunks: a first load may be 100,000 rows, and holding every raw row beside
            # the hunks built from them doubles the peak, which the process keeps as resident size.
            out: list[Hunk] = []
            shared = Shared(self.known)
            cursor = raw.execute(sql.hunks_since, (lsn,))
            try:
                while rows := cursor.fetchmany(2000):
                    out.extend(hunk_from_row(r, shared) for r in rows)
            finally:
                cursor.close()
            with_messages(raw, sql, out, self._messages)
            return out

        async with self._lock:
            try:
                return await self._link.hop(load)
            except StoreError as exc:
                raise unavailable(self.path, exc) from None

    async def open_effects(self) -> list[EffectRow]:
        return [effect_row(r) for r in await self._read(self.sql.open_effects)]

    async def hunks_done_after(self, lsn: int) -> set[str]:
        """The hunks that an effect journaled after `lsn` has already carried out (state done)."""
        rows = await self._read(self.sql.effects_done_after, (lsn,))
        return {e["hunkId"] for r in rows for e in json.loads(r[0])}

    async def has_pending_effect(self, uri: str) -> bool:
        return bool(await self._read(self.sql.pending_effect, (AsUri(uri),)))

    async def proposal(self, proposal_id: str) -> JSON | None:
        rows = await self._read(self.sql.proposal_hashes, (proposal_id,))
        return dict(zip(("id", "edit_hash", "result_hash", "lsn"), rows[0])) if rows else None

    async def proposal_record(self, proposal_id: str) -> JSON | None:
        """What a proposal says of itself: its task, agent, whole message and when it came."""
        rows = await self._read(self.sql.proposal_record, (proposal_id,))
        return dict(zip(("proposalId", "taskId", "agent", "message", "createdAt"), rows[0])) if rows else None

    async def ops(self, after_lsn: int = 0, limit: int = 1000) -> list[OpRow]:
        return [op_row(r) for r in await self._read(self.sql.ops, (after_lsn, limit))]

    async def op(self, op_id: str) -> OpRow | None:
        rows = await self._read(self.sql.op_by_id, (op_id,))
        return op_row(rows[0]) if rows else None

    async def stamps(self) -> dict[str, tuple[int, int, str | None]]:
        """uri -> (size, mtime_ns, hash) of each file when Stet last judged its hunks."""
        return {r[0]: (r[1], r[2], r[3]) for r in await self._read(self.sql.stamps)}

    # --- writes ------------------------------------------------------------------------
    async def add_roots(self, uris: list[str]) -> None:
        """Folders added to the workspace: paths inside them are stored relative to them from
        now on, each at the next root index, recorded first (so every process reads them)."""
        roots = self.roots.with_roots(uris)
        if roots.uris == self.roots.uris:
            return
        new = [(n, u) for n, u in enumerate(roots.uris) if n >= len(self.roots.uris)]
        sql = self.sql

        def record(raw: Raw) -> None:
            raw.begin(True, False)
            try:
                for row in new:
                    raw.execute(sql.put_root, row)
                raw.commit(True, False)
            except BaseException:
                raw.rollback(False)
                raise

        async with self._lock:
            await self._check_held()
            try:
                await self._link.hop(record)
            except StoreError as exc:
                raise unavailable(self.path, exc) from None
            self.roots = roots
            self._link.set_roots(roots)

    async def put_stamps(self, stamps: list[tuple[str, int, int, str | None]]) -> None:
        """Record what files were when their hunks were judged (derived: recomputed if lost)."""
        if not stamps:
            return
        async with self.write(derived=True) as tx:
            await tx.put_stamps(stamps)

    @contextlib.asynccontextmanager
    async def write(self, derived: bool = False) -> AsyncIterator[Tx]:
        """One write transaction, committed when the block ends.

        The statements are sent to the store's thread in as few hops as the block allows: BEGIN
        goes with the first statement, writes wait for the next read or for the COMMIT (see Tx).

        `derived`: the transaction records only what recovery derives again from content and
        the journal (an effect done, a hunk found stale or in its file, positions, stamps), so
        it is committed without waiting for the disk (SQLite: synchronous=NORMAL; PostgreSQL:
        synchronous_commit off). A power loss may lose it, never reorder it; docs/protocol.md,
        "What is durable when", allows it. Decisions are never derived.
        """
        async with self._lock:
            await self._check_held()
            tx = Tx(
                self._link,
                self.sql,
                write=True,
                path=self.path,
                known=self.known,
                derived=derived,
                messages=self._messages,
            )
            try:
                yield tx
            except BaseException:
                if tx.sent:
                    await self._rollback(tx)
                raise
            try:
                await tx._flush(tx._commit_and_read)
            except BaseException:
                if tx.sent:
                    await self._rollback(tx)
                raise
            # Committed - into the store at the store's path? Only then may anyone acknowledge it.
            if tx.begun:
                await self._check_held()

    async def _rollback(self, tx: Tx) -> None:
        with contextlib.suppress(StoreError):
            await self._link.hop(tx._rollback)

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        """A consistent snapshot for several reads (a deferred transaction: takes no write lock)."""
        async with self._lock:
            tx = Tx(self._link, self.sql, write=False, path=self.path, known=self.known, messages=self._messages)
            try:
                yield tx
            finally:
                if tx.sent:
                    with contextlib.suppress(StoreError):
                        await self._link.hop(_end_read)


def _end_read(raw: Raw) -> None:
    raw.commit(False, False)
