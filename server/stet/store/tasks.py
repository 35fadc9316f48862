"""The task tables (migration 2): tasks, their steps, notes and files read.

Functions over a transaction (`Tx`, from `store.write()` or `store.read()`): the service
decides, this module only knows SQL. Every row carries the lsn of the operation that last
wrote it, like the hunks.
"""

from __future__ import annotations

from ..domain.task import FileRow, NoteRow, StepRow, TaskRow
from .roots import AsUri
from .rows import Row, now_iso
from .tx import Tx


def _task(r: Row) -> TaskRow:
    return TaskRow(
        id=r[0],
        title=r[1],
        goal=r[2],
        agent=r[3],
        status=r[4],
        summary=r[5],
        created_at=r[6],
        updated_at=r[7],
        lsn=r[8],
    )


async def task(tx: Tx, task_id: str) -> TaskRow | None:
    rows = await tx._all(tx.sql.task, (task_id,))
    return _task(rows[0]) if rows else None


async def tasks(tx: Tx, status: str | None = None) -> list[TaskRow]:
    if status is None:
        rows = await tx._all(tx.sql.tasks_all)
    else:
        rows = await tx._all(tx.sql.tasks_by_status, (status,))
    return [_task(r) for r in rows]


async def add_task(tx: Tx, task_id: str, title: str, goal: str | None, agent: str | None, lsn: int) -> TaskRow:
    at = now_iso()
    await tx._run(tx.sql.add_task, (task_id, title, goal, agent, at, at, lsn))
    return TaskRow(
        id=task_id,
        title=title,
        goal=goal,
        agent=agent,
        status="open",
        summary=None,
        created_at=at,
        updated_at=at,
        lsn=lsn,
    )


async def touch(tx: Tx, task_id: str, lsn: int, status: str | None = None, summary: str | None = None) -> None:
    """Mark the task as changed by operation `lsn` (and set its status when given)."""
    if status is None:
        await tx._run(tx.sql.touch_task, (now_iso(), lsn, task_id))
    else:
        await tx._run(tx.sql.close_task, (status, summary, now_iso(), lsn, task_id))


async def steps(tx: Tx, task_id: str) -> list[StepRow]:
    rows = await tx._all(tx.sql.steps, (task_id,))
    return [StepRow(n=r[0], text=r[1], status=r[2], updated_at=r[3], lsn=r[4]) for r in rows]


async def put_step(tx: Tx, task_id: str, n: int | None, text: str, status: str, lsn: int) -> StepRow:
    """Add a step (n None: numbered after the last) or rewrite step n."""
    at = now_iso()
    if n is None:
        rows = await tx._all(tx.sql.last_step, (task_id,))
        n = rows[0][0] + 1
        await tx._run(tx.sql.add_step, (task_id, n, text, status, at, lsn))
    else:
        await tx._run(tx.sql.set_step, (text, status, at, lsn, task_id, n))
    return StepRow(n=n, text=text, status=status, updated_at=at, lsn=lsn)


async def notes(tx: Tx, task_id: str) -> list[NoteRow]:
    rows = await tx._all(tx.sql.notes, (task_id,))
    return [NoteRow(n=r[0], kind=r[1], text=r[2], why=r[3], answers=r[4], at=r[5], lsn=r[6]) for r in rows]


async def add_note(
    tx: Tx, task_id: str, kind: str, text: str, why: str | None, answers: int | None, lsn: int
) -> NoteRow:
    rows = await tx._all(tx.sql.last_note, (task_id,))
    n = rows[0][0] + 1
    at = now_iso()
    await tx._run(tx.sql.add_note, (task_id, n, kind, text, why, answers, at, lsn))
    return NoteRow(n=n, kind=kind, text=text, why=why, answers=answers, at=at, lsn=lsn)


async def files(tx: Tx, task_id: str) -> list[FileRow]:
    rows = await tx._all(tx.sql.files, (task_id,))
    return [FileRow(uri=r[0], hash=r[1], read_at=r[2], lsn=r[3]) for r in rows]


async def put_file(tx: Tx, task_id: str, uri: str, hash_: str | None, lsn: int) -> FileRow:
    """Record a read; reading the same file again replaces the earlier record."""
    at = now_iso()
    await tx._run(tx.sql.put_file, (task_id, AsUri(uri), hash_, at, lsn))
    return FileRow(uri=uri, hash=hash_, read_at=at, lsn=lsn)
