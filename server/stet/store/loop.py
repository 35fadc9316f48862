"""The agent's loop (migration 7): the turns hooks captured in, and what an agent was told (and,
migration 11, the rejections sent back to it: on the hunks, so that every process shows them).

Functions over a transaction (`Tx`); agents/loop.py decides, this module only knows SQL.
"""

from __future__ import annotations

from collections.abc import Iterable

from .tx import Tx


async def add_turn(tx: Tx, proposal_id: str, session: str | None) -> None:
    """Number `proposal_id` as the session's next turn (under the write lock: no two turns of a
    session get one number); a proposal numbered already keeps its number. (No session: none.)"""
    if session is not None:
        await tx._run(tx.sql.add_turn, (proposal_id, session, session))


async def last_turn(tx: Tx) -> tuple[str, int] | None:
    """The latest turn captured, by its proposal's operation: (session, number)."""
    rows = await tx._all(tx.sql.last_turn)
    return (rows[0][0], int(rows[0][1])) if rows else None


async def told(tx: Tx, agent: str) -> dict[str, str]:
    """hunk id -> the decision the agent was last told of it (in this checkout)."""
    return {r[0]: r[1] for r in await tx._all(tx.sql.told, (agent,))}


async def put_sent_back(tx: Tx, sent: Iterable[tuple[str, str | None]], lsn: int) -> None:
    """Record rejections sent back to the agent under the operation `lsn` (so every process
    following the store reads the hunks again): (hunk id, the decision sent; None: taken back)."""
    for hunk_id, decision in sent:
        await tx._run(tx.sql.set_sent_back, (decision, lsn, hunk_id))


async def put_told(tx: Tx, agent: str, decisions: Iterable[tuple[str, str | None]]) -> None:
    """Record what the agent was told: (hunk id, decision); None forgets the hunk's record."""
    for hunk_id, decision in decisions:
        if decision is None:
            await tx._run(tx.sql.drop_told, (agent, hunk_id))
        else:
            await tx._run(tx.sql.put_told, (agent, hunk_id, decision))
