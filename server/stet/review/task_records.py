"""The task tables as the task service (agents/tasks.py) and the agent's loop use them: the
review opens each transaction, the task service says what to read and write in it.

A write is one operation of the log, committed before it is answered and idempotent by its id:
a replay answers what the operation first answered and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from ..domain.shapes import JSON
from ..domain.task import FileRow, NoteRow, StepRow, TaskRow
from ..errors import Conflict
from ..store import Tx
from ..store import tasks as sql
from .state import ReviewState


class TaskTables:
    """The task tables within one transaction (its operation's `lsn` stamps what it writes)."""

    def __init__(self, tx: Tx, lsn: int = 0) -> None:
        self._tx, self.lsn = tx, lsn

    async def task(self, task_id: str) -> TaskRow | None:
        return await sql.task(self._tx, task_id)

    async def tasks(self, status: str | None = None) -> list[TaskRow]:
        return await sql.tasks(self._tx, status)

    async def steps(self, task_id: str) -> list[StepRow]:
        return await sql.steps(self._tx, task_id)

    async def notes(self, task_id: str) -> list[NoteRow]:
        return await sql.notes(self._tx, task_id)

    async def files(self, task_id: str) -> list[FileRow]:
        return await sql.files(self._tx, task_id)

    async def add_task(self, task_id: str, title: str, goal: str | None, agent: str | None) -> TaskRow:
        return await sql.add_task(self._tx, task_id, title, goal, agent, self.lsn)

    async def touch(self, task_id: str, status: str | None = None, summary: str | None = None) -> None:
        """Mark the task as changed by this operation (and set its status when given)."""
        await sql.touch(self._tx, task_id, self.lsn, status, summary)

    async def put_step(self, task_id: str, n: int | None, text: str, status: str) -> StepRow:
        """Add a step (n None: numbered after the last) or rewrite step n."""
        return await sql.put_step(self._tx, task_id, n, text, status, self.lsn)

    async def add_note(self, task_id: str, kind: str, text: str, why: str | None, answers: int | None) -> NoteRow:
        return await sql.add_note(self._tx, task_id, kind, text, why, answers, self.lsn)

    async def put_file(self, task_id: str, uri: str, hash_: str | None) -> FileRow:
        """Record a read; reading the same file again replaces the earlier record."""
        return await sql.put_file(self._tx, task_id, uri, hash_, self.lsn)


class TaskRecords:
    def __init__(self, state: ReviewState) -> None:
        self.state = state

    async def operation(self, kind: str, op_id: str, args: JSON, do: Callable[[TaskTables], Awaitable[JSON]]) -> JSON:
        """Run `do` as the operation `op_id` of the log (its arguments `args`), committed with
        its answer; the answer recorded when `op_id` ran already (Conflict: as another kind)."""
        async with self.state.require_store().write() as tx:
            prior = await tx.op(op_id)
            if prior is not None:
                if prior.kind != kind:
                    raise Conflict(f"requestId {op_id} was already used for a {prior.kind} operation, not {kind}")
                answer: JSON = prior.result  # what this same operation answered when it ran
                return answer
            lsn = await tx.log(op_id, kind, args)
            result = await do(TaskTables(tx, lsn))
            await tx.set_result(lsn, result)
        return result

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[TaskTables]:
        """The task tables as one consistent snapshot, for several reads."""
        async with self.state.require_store().read() as tx:
            yield TaskTables(tx)

    async def exists(self, task_id: str) -> bool:
        async with self.reading() as tables:
            return await tables.task(task_id) is not None
