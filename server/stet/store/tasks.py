"""The task tables (migration 2): tasks, their steps, notes and files read.

Functions over a transaction (`Tx`, from `store.write()` or `store.read()`): the service
decides, this module only knows SQL. Every row carries the lsn of the operation that last
wrote it, like the hunks.
"""

from __future__ import annotations

from ..domain.task import FileRow, NoteRow, StepRow, TaskRow
from .rows import now_iso
from .tx import Tx

_TASK = "id, title, goal, agent, status, summary, created_at, updated_at, lsn"


async def task(tx: Tx, task_id: str) -> TaskRow | None:
    rows = await tx._all(f"SELECT {_TASK} FROM tasks WHERE id = ?", (task_id,))
    return TaskRow(*rows[0]) if rows else None


async def tasks(tx: Tx, status: str | None = None) -> list[TaskRow]:
    if status is None:
        rows = await tx._all(f"SELECT {_TASK} FROM tasks ORDER BY created_at, id")
    else:
        rows = await tx._all(f"SELECT {_TASK} FROM tasks WHERE status = ? ORDER BY created_at, id", (status,))
    return [TaskRow(*r) for r in rows]


async def add_task(tx: Tx, task_id: str, title: str, goal: str | None, agent: str | None, lsn: int) -> TaskRow:
    at = now_iso()
    await tx._run(
        f"INSERT INTO tasks ({_TASK}) VALUES (?, ?, ?, ?, 'open', NULL, ?, ?, ?)",
        (task_id, title, goal, agent, at, at, lsn),
    )
    return TaskRow(task_id, title, goal, agent, "open", None, at, at, lsn)


async def touch(tx: Tx, task_id: str, lsn: int, status: str | None = None, summary: str | None = None) -> None:
    """Mark the task as changed by operation `lsn` (and set its status when given)."""
    if status is None:
        await tx._run("UPDATE tasks SET updated_at = ?, lsn = ? WHERE id = ?", (now_iso(), lsn, task_id))
    else:
        await tx._run(
            "UPDATE tasks SET status = ?, summary = COALESCE(?, summary), updated_at = ?, lsn = ? WHERE id = ?",
            (status, summary, now_iso(), lsn, task_id),
        )


async def steps(tx: Tx, task_id: str) -> list[StepRow]:
    rows = await tx._all(
        "SELECT n, text, status, updated_at, lsn FROM task_steps WHERE task_id = ? ORDER BY n", (task_id,)
    )
    return [StepRow(*r) for r in rows]


async def put_step(tx: Tx, task_id: str, n: int | None, text: str, status: str, lsn: int) -> StepRow:
    """Add a step (n None: numbered after the last) or rewrite step n."""
    at = now_iso()
    if n is None:
        rows = await tx._all("SELECT COALESCE(MAX(n), 0) FROM task_steps WHERE task_id = ?", (task_id,))
        n = rows[0][0] + 1
        await tx._run(
            "INSERT INTO task_steps (task_id, n, text, status, updated_at, lsn) VALUES (?, ?, ?, ?, ?, ?)",
            (task_id, n, text, status, at, lsn),
        )
    else:
        await tx._run(
            "UPDATE task_steps SET text = ?, status = ?, updated_at = ?, lsn = ? WHERE task_id = ? AND n = ?",
            (text, status, at, lsn, task_id, n),
        )
    return StepRow(n, text, status, at, lsn)


async def notes(tx: Tx, task_id: str) -> list[NoteRow]:
    rows = await tx._all(
        "SELECT n, kind, text, why, answers, at, lsn FROM task_notes WHERE task_id = ? ORDER BY n", (task_id,)
    )
    return [NoteRow(*r) for r in rows]


async def add_note(
    tx: Tx, task_id: str, kind: str, text: str, why: str | None, answers: int | None, lsn: int
) -> NoteRow:
    rows = await tx._all("SELECT COALESCE(MAX(n), 0) FROM task_notes WHERE task_id = ?", (task_id,))
    n = rows[0][0] + 1
    at = now_iso()
    await tx._run(
        "INSERT INTO task_notes (task_id, n, kind, text, why, answers, at, lsn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (task_id, n, kind, text, why, answers, at, lsn),
    )
    return NoteRow(n, kind, text, why, answers, at, lsn)


async def files(tx: Tx, task_id: str) -> list[FileRow]:
    rows = await tx._all("SELECT uri, hash, read_at, lsn FROM task_files WHERE task_id = ? ORDER BY uri", (task_id,))
    return [FileRow(*r) for r in rows]


async def put_file(tx: Tx, task_id: str, uri: str, hash_: str | None, lsn: int) -> FileRow:
    """Record a read; reading the same file again replaces the earlier record."""
    at = now_iso()
    await tx._run(
        "INSERT INTO task_files (task_id, uri, hash, read_at, lsn) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (task_id, uri) DO UPDATE SET hash = excluded.hash, read_at = excluded.read_at, lsn = excluded.lsn",
        (task_id, uri, hash_, at, lsn),
    )
    return FileRow(uri, hash_, at, lsn)
