"""What an agent was told of the developer's decisions (agents/loop.py decides what to tell), and
the turns hooks captured in: the review opens each transaction.

One telling is one write transaction: the decisions read and the record of what was told commit
together, one writer at a time, so no decision is told twice."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager

from ..store import Tx
from ..store import loop as sql
from ..store import tasks as task_sql
from .config import new_id
from .state import ReviewState


class Telling:
    """One telling of `agent`: the ids of the tasks it started, and what it was told of each hunk
    (hunk id -> the decision last told)."""

    def __init__(self, tx: Tx, agent: str, tasks: set[str], told: dict[str, str]) -> None:
        self._tx, self.agent, self.tasks, self.told = tx, agent, tasks, told

    async def record(self, decisions: Iterable[tuple[str, str | None]]) -> None:
        """Record what the agent is told now: (hunk id, decision); None forgets the hunk's record."""
        await sql.put_told(self._tx, self.agent, decisions)

    async def send_back(self, sent: Sequence[tuple[str, str]]) -> None:
        """Record the rejections sent back to the agent to go on working (request changes):
        (hunk id, the decision sent), on the hunks under an operation of the log (`sentBack`),
        in this transaction: the review says so in every process that follows the store."""
        if sent:
            lsn = await self._tx.log(
                new_id("sent-"), "sentBack", {"hunkIds": [h for h, _ in sent], "agent": self.agent}
            )
            await sql.put_sent_back(self._tx, sent, lsn)


class Told:
    def __init__(self, state: ReviewState) -> None:
        self.state = state

    @asynccontextmanager
    async def telling(self, agent: str) -> AsyncIterator[Telling]:
        async with self.state.require_store().write() as tx:  # one writer at a time: told once
            tasks = {t.id for t in await task_sql.tasks(tx) if t.agent == agent}
            yield Telling(tx, agent, tasks, await sql.told(tx, agent))

    async def untell(self, agent: str, undo: Sequence[tuple[str, str | None]]) -> None:
        """Take back a notice that could not be delivered: told again at the next prompt (a
        rejection it sent back is no longer said to be)."""
        if undo:
            async with self.state.require_store().write() as tx:
                await sql.put_told(tx, agent, undo)
                rows = await tx.hunks(h for h, _ in undo)
                back = [hid for hid, h in rows.items() if h.sent_back is not None]
                if back:
                    lsn = await tx.log(
                        new_id("sent-"), "sentBack", {"hunkIds": back, "agent": agent, "takenBack": True}
                    )
                    await sql.put_sent_back(tx, [(hid, None) for hid in back], lsn)

    async def last_turn(self) -> tuple[str, int] | None:
        """The latest turn captured, by its proposal's operation: (session, number)."""
        async with self.state.require_store().read() as tx:
            return await sql.last_turn(tx)
