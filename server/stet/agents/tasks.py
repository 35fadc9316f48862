"""The task service: record what an agent is doing, and give a new worker the whole picture.

Every write is one transaction with an operation-log entry, committed before it is
answered, and idempotent by request id (a replay returns the recorded answer and changes
nothing), like every other mutation. Reads assemble the context from the store, the
review's hunks and the files as they are now (the editor's buffer when one is open).

Agents also propose through here when they send exact-text edits: the change is carried
onto the files as they are (see `domain.rebase`), so a resumed agent can re-send what its
predecessor sent without duplicating anything.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from ..domain import task as T
from ..domain.proposed import Proposed
from ..domain.rebase import ChangeDoesNotFit, replace_text
from ..domain.shapes import JSON
from ..errors import Conflict, InvalidParams, StetError, TooLarge, UnknownTask
from ..faults import fault
from ..review import Review, new_id
from ..review.task_records import TaskRecords, TaskTables
from .checks import opt_text as _opt_text
from .checks import text as _text
from .derived import input_key, propose_derived
from .snapshots import Snapshots


class Tasks:
    def __init__(self, review: Review):
        self.review = review
        self.records = TaskRecords(review.state)

    # --- helpers ---------------------------------------------------------------------------
    async def _write(
        self, kind: str, request_id: str | None, args: JSON, do: Callable[[TaskTables], Awaitable[T.TaskWritten]]
    ) -> T.TaskWritten:
        """One durable, idempotent task operation (what it wrote is kept in the log: a replay answers it)."""
        if request_id is not None:
            _text("requestId", request_id, 256)
        # What the operation stores: its arguments in the op log, and the same text in its rows.
        stored = 2 * len(json.dumps(args, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        limit = self.review.state.limits.max_bytes
        if stored > limit:
            raise TooLarge(f"this {kind} would make Stet store {stored} bytes; the limit is {limit}")

        async def recorded(tables: TaskTables) -> JSON:
            return (await do(tables)).record()

        result = await self.records.operation(kind, request_id or new_id("op-"), args, recorded)
        fault("task:after-commit")
        return T.TaskWritten.from_record(result)

    @staticmethod
    async def _task(tables: TaskTables, task_id: str) -> T.TaskRow:
        row = await tables.task(task_id)
        if row is None:
            raise UnknownTask(
                f"unknown task {task_id}: start it first (`stet task start --id {task_id} TITLE`, "
                f"or the start_task tool)",
                {"taskId": task_id},
            )
        return row

    # --- writes ---------------------------------------------------------------------------
    async def start(
        self,
        title: str,
        goal: str | None = None,
        agent: str | None = None,
        task_id: str | None = None,
        request_id: str | None = None,
    ) -> T.TaskWritten:
        """Start a task. Starting an existing id with the same title and goal returns it."""
        _text("title", title)
        goal = _opt_text("goal", goal)
        agent = _opt_text("agent", agent, 256)
        if task_id is not None:
            _text("taskId", task_id, 256)
        # Without an id, the same title and goal give the same id: a retried start finds its task.
        wanted = task_id or _slug_id(title, goal)

        async def do(tables: TaskTables) -> T.TaskWritten:
            row = await tables.task(wanted)
            if row is not None:
                if row.title != title or (goal is not None and row.goal != goal):
                    raise Conflict(
                        f"task {wanted} already exists with another title or goal; carry it on with "
                        f"`stet resume {wanted}`, or start a new task with another id",
                        {"taskId": wanted},
                    )
                return T.TaskWritten("start", wanted, task=row)
            row = await tables.add_task(wanted, title, goal, agent)
            return T.TaskWritten("start", wanted, task=row, created=True)

        return await self._write(
            "task.start", request_id, {"taskId": wanted, "title": title, "goal": goal, "agent": agent}, do
        )

    async def step(
        self,
        task_id: str,
        text: str | None = None,
        status: str | None = None,
        n: int | None = None,
        request_id: str | None = None,
    ) -> T.TaskWritten:
        """Add a step, or change one: by number `n`, or by its exact text."""
        if status is not None and status not in T.STEP_STATUSES:
            raise InvalidParams(f"step status must be one of {', '.join(T.STEP_STATUSES)}, not {status!r}")
        if text is not None:
            _text("step text", text)
        if n is None and text is None:
            raise InvalidParams("give the step's text (a new step, or an existing one by its exact text) or its number")
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise InvalidParams("a step number is a positive integer")

        async def do(tables: TaskTables) -> T.TaskWritten:
            await self._task(tables, task_id)
            steps = await tables.steps(task_id)
            current = None
            if n is not None:
                current = next((s for s in steps if s.n == n), None)
                if current is None:
                    raise InvalidParams(f"task {task_id} has no step {n} (it has {len(steps)})")
            elif text is not None:
                current = next((s for s in steps if s.text == text), None)
            if current is None:
                assert text is not None  # a new step; without a text it was refused above
                row = await tables.put_step(task_id, None, text, status or "pending")
            else:
                row = await tables.put_step(task_id, current.n, text or current.text, status or current.status)
            await tables.touch(task_id)
            return T.TaskWritten("step", task_id, step=row)

        args = {"taskId": task_id, "text": text, "status": status, "n": n}
        return await self._write("task.step", request_id, args, do)

    async def note(
        self,
        task_id: str,
        text: str,
        kind: str = "decision",
        why: str | None = None,
        answers: int | None = None,
        request_id: str | None = None,
    ) -> T.TaskWritten:
        """Record a decision (and why), a question for the developer, an answer to one, or a note."""
        _text("note", text)
        why = _opt_text("why", why)
        if kind not in T.NOTE_KINDS:
            raise InvalidParams(f"note kind must be one of {', '.join(T.NOTE_KINDS)}, not {kind!r}")
        if (kind == "answer") != (answers is not None):
            raise InvalidParams("an answer names the question it answers (its number), and only an answer does")

        async def do(tables: TaskTables) -> T.TaskWritten:
            await self._task(tables, task_id)
            notes = await tables.notes(task_id)
            if request_id is None and notes and T.is_retry(notes[-1], kind, text, why, answers, time.time()):
                # The same note again right after it was recorded, without a request id: a retried
                # call (an MCP client after a timeout), not a second decision. Recorded once.
                return T.TaskWritten("note", task_id, note=notes[-1], repeated=True)
            if answers is not None:
                question = next((x for x in notes if x.n == answers), None)
                if question is None or question.kind != "question":
                    raise InvalidParams(f"task {task_id} has no question number {answers}")
            row = await tables.add_note(task_id, kind, text, why, answers)
            await tables.touch(task_id)
            return T.TaskWritten("note", task_id, note=row)

        args = {"taskId": task_id, "kind": kind, "text": text, "why": why, "answers": answers}
        return await self._write("task.note", request_id, args, do)

    async def read(self, task_id: str, paths: Sequence[str], request_id: str | None = None) -> T.TaskWritten:
        """Record that the agent read these files: each with its content hash now."""
        if isinstance(paths, str) or not paths:
            raise InvalidParams("give at least one file path")
        uris = list(dict.fromkeys(self.review.ws.uri_for(p) for p in paths))
        # Hashed before the transaction (no file I/O while holding the write lock); a replay
        # returns the hashes first recorded.
        hashes = {uri: T.content_hash(await self.review.bytes_now(uri)) for uri in uris}

        async def do(tables: TaskTables) -> T.TaskWritten:
            await self._task(tables, task_id)
            rows = [await tables.put_file(task_id, uri, hashes[uri]) for uri in uris]
            await tables.touch(task_id)
            return T.TaskWritten("read", task_id, files=tuple(rows))

        return await self._write("task.read", request_id, {"taskId": task_id, "uris": uris}, do)

    async def finish(
        self, task_id: str, status: str = "done", summary: str | None = None, request_id: str | None = None
    ) -> T.TaskWritten:
        """Close a task as done or abandoned (or open it again)."""
        if status not in T.TASK_STATUSES:
            raise InvalidParams(f"task status must be one of {', '.join(T.TASK_STATUSES)}, not {status!r}")
        summary = _opt_text("summary", summary)

        async def do(tables: TaskTables) -> T.TaskWritten:
            await self._task(tables, task_id)
            await tables.touch(task_id, status=status, summary=summary)
            return T.TaskWritten("finish", task_id, task=await self._task(tables, task_id))

        result = await self._write(
            "task.finish", request_id, {"taskId": task_id, "status": status, "summary": summary}, do
        )
        if status != "open":
            await Snapshots(self.review).drop(task_id)  # its baseline is no longer needed
        return result

    # --- reads ----------------------------------------------------------------------------
    async def context(self, task_id: str) -> T.TaskPicture:
        """Everything a new worker needs to carry the task on (`stet/taskContext`)."""
        _text("taskId", task_id, 256)
        review = self.review
        await review.up_to_date()  # another process may have decided meanwhile, a file may have changed
        async with self.records.reading() as tables:
            task = await tables.task(task_id)
            steps = await tables.steps(task_id) if task else []
            notes = await tables.notes(task_id) if task else []
            files = await tables.files(task_id) if task else []
        hunks = review.list(task_id=task_id)
        if task is None and not hunks:
            raise UnknownTask(
                f"unknown task {task_id}: no task was started with this id and no hunk names it", {"taskId": task_id}
            )
        now = []
        for row in files:
            try:
                now.append((row, await self.review.bytes_now(row.uri)))
            except StetError:
                now.append((row, None))  # outside the workspace now, or unreadable: gone for us
        return T.TaskPicture(task_id, task, tuple(steps), tuple(notes), tuple(now), tuple(hunks))

    async def list(self, status: str | None = None) -> list[T.TaskListed]:
        """Tasks (optionally of one status), each with its hunk counts."""
        if status is not None and status not in T.TASK_STATUSES:
            raise InvalidParams(f"task status must be one of {', '.join(T.TASK_STATUSES)}, not {status!r}")
        await self.review.sync()
        async with self.records.reading() as tables:
            rows = await tables.tasks(status)
        out = []
        for row in rows:
            counts: dict[str, int] = {}
            for h in self.review.list(task_id=row.id):
                counts[h.status.value] = counts.get(h.status.value, 0) + 1
            out.append(T.TaskListed(row, counts))
        return out

    # --- proposing -------------------------------------------------------------------------
    async def propose_text_edits(
        self,
        task_id: str,
        edits: Sequence[tuple[str, str, str]],
        proposal_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
    ) -> Proposed:
        """Propose (path, old text, new text) replacements for review, as part of a task.

        Each old text must occur exactly once in its file; an empty old text creates a file
        that does not exist. A change re-sent after some of this task's hunks were applied is
        carried onto the files as they are now.
        """
        if not edits:
            raise InvalidParams("give at least one edit")
        by_file: dict[str, list[tuple[str, str]]] = {}
        for path, old, new in edits:
            if not isinstance(old, str) or not isinstance(new, str):
                raise InvalidParams("each edit needs oldText and newText strings")
            by_file.setdefault(self.review.ws.uri_for(path), []).append((old, new))
        content = json.dumps([task_id, [[u, p] for u, p in by_file.items()]], ensure_ascii=False)

        def maker(uri: str, pairs: list[tuple[str, str]]) -> Callable[[str | None], str]:
            def make(text: str | None) -> str:
                if text is None:  # a new file: one edit, from nothing
                    if len(pairs) != 1 or pairs[0][0] != "":
                        raise ChangeDoesNotFit(
                            f"{self.review.ws.rel(uri)} does not exist: to create it, send one edit with an empty oldText"
                        )
                    return pairs[0][1]
                return replace_text(text, pairs, self.review.ws.rel(uri))

            return make

        makers = {uri: maker(uri, pairs) for uri, pairs in by_file.items()}
        key = input_key("edits", content)
        pid = proposal_id or f"p-{key[-16:]}"
        _text("taskId", task_id, 256)
        return await propose_derived(self.review, task_id, key, pid, makers, agent, message)

    async def propose_patch(
        self,
        task_id: str,
        text: str,
        proposal_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
        strip: int = 1,
    ) -> Proposed:
        """Propose a unified diff as part of a task (the CLI's path: `stet propose --patch --task`).

        A diff that no longer fits because some of this task's hunks were applied since it
        was made is carried onto the files as they are now."""
        _text("taskId", task_id, 256)
        from . import intake  # the WorkspaceEdit parser loads lsprotocol: only when a diff comes in

        answer, notes = await intake.propose_patch(
            self.review, text, proposal_id, task_id=task_id, agent=agent, message=message, strip=strip
        )
        return replace(answer, notes=tuple(notes)) if notes else answer


def _slug_id(title: str, goal: str | None) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:32].strip("-")
    digest = hashlib.sha256(json.dumps([title, goal]).encode("utf-8", "surrogatepass")).hexdigest()[:4]
    return f"t-{slug + '-' if slug else ''}{digest}"
