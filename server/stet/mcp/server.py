"""`stet mcp`: Stet as an MCP server (stdio), so an agent can work through tools.

Built on the official `mcp` SDK (MCPServer). It opens the workspace's store like the CLI
does and uses the same services: proposals go through `Review.propose`, task records
through `Tasks`; nothing here touches SQL or files directly. The editor's language server,
when one runs, shows every change within a second.

Tool errors come back as MCP tool errors (`isError: true`) whose text says what went wrong
and what to do; every tool answers with text for the model and the same data as JSON in
`structuredContent`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from .. import __version__
from ..agents.resume import render
from ..agents.tasks import Tasks
from ..domain.model import Hunk
from ..domain.status import Status
from ..errors import StetError, StoreUnavailable, UnknownHunk
from ..operations import offered_by
from ..present import hunk_json, task_json
from ..present import proposal as proposal_json
from ..review import Opened, Review
from ..review.reconnecting import Reconnecting
from ..runtime.awaiting import Changes
from ..runtime.collector import tune_for_a_long_run
from .handshake import INSTRUCTIONS, SERVER_NAME

log = logging.getLogger(__name__)
T = TypeVar("T")

# Seconds wait_for_decisions gives an accepted hunk to be applied once nothing is undecided.
SETTLE = 5.0


class Edit(BaseModel):
    path: Annotated[str, Field(description="File path relative to the workspace root (or absolute inside it).")]
    old_text: Annotated[
        str,
        Field(
            description="Exact text to replace, copied from the file (whitespace and indentation included); it must "
            "occur exactly once in the file. Include a few surrounding lines to make it unique. Empty only to "
            "create a file that does not exist."
        ),
    ]
    new_text: Annotated[str, Field(description="The text that replaces old_text (the whole content for a new file).")]


class _State:
    def __init__(self) -> None:
        # The review or why there is none (review/reconnecting.py): made by Tools, opened by the
        # server's lifespan, and again by the next call when its store may come back.
        self.handle: Reconnecting | None = None
        self.changes: Changes | None = None  # what every wait_for_decisions waits on

    @property
    def review(self) -> Review | None:
        return self.handle.review if self.handle is not None else None

    async def current(self) -> Review:
        """The review for a call (tried again now when it is not open and may come back)."""
        if self.handle is None:
            raise StoreUnavailable("the review store is not open")
        return await self.handle.current()

    def changes_of(self, review: Review) -> Changes:
        if self.changes is None or self.changes.review is not review:
            self.changes = Changes(review)
        return self.changes


def _result(text: str, data: dict[str, Any] | list[Any]) -> CallToolResult:
    structured = data if isinstance(data, dict) else {"items": data}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


async def _up_to_date(review: Review) -> None:
    """The review brought up to date as every door does (Review.up_to_date): what other
    processes decided, journaled edits a killed writer left, the files as they are."""
    lag = (await review.up_to_date()).lag
    if lag:
        log.warning("%s", lag)


def _fail(exc: StetError) -> ToolError:
    return ToolError(f"{exc.name}: {exc.message}")


async def _run(coro: Awaitable[T]) -> T:
    try:
        return await coro
    except StetError as exc:
        raise _fail(exc) from None


DESCRIPTIONS = {
    "start_task": (
        "Start a task: your unit of work, which the developer and any later agent can follow. Call it once "
        "at the beginning; give a short title and the goal in the developer's words. Returns the task id: pass it to "
        "every other tool. If you are continuing earlier work, do not start a new task: call get_task_context."
    ),
    "list_tasks": (
        "List the tasks in this workspace with their status and hunk counts. Use it to find the task to "
        "carry on when you do not know its id."
    ),
    "get_task_context": (
        "Get the full picture of a task, to carry it on after another agent (or an earlier you) stopped: "
        "the goal, steps, decisions and answered questions (do not ask again), files read and whether they changed "
        "since, and every proposed hunk: completed, staged, waiting for the developer, rejected with the developer's "
        "feedback, accepted with the developer's own changes, stale; and the open questions. Read it before doing "
        "anything else in a resumed task."
    ),
    "record_step": (
        "Add a step to the task's plan, or change one's status. Steps: pending, in_progress, completed, "
        "pending_confirmation (done on your side, waiting for the developer). Refer to an existing step by its "
        "number or by its exact text."
    ),
    "record_note": (
        "Record a decision you made and why (kind=decision), a question for the developer (kind=question), "
        "the developer's answer to one (kind=answer, with answers=<question number>), or another note (kind=note). "
        "Decisions and answers are what a later agent must not re-ask or re-decide: record them as soon as they are made."
    ),
    "record_files_read": (
        "Record that you read these files. Stet keeps a hash of each file's content now, so a later agent "
        "learns which files changed since they were read (and must be read again). Call it after reading files you "
        "rely on."
    ),
    "propose_edits": (
        "Propose edits for the developer to review, as exact text replacements. Nothing is written to the "
        "files: the developer accepts, rejects (with feedback) or edits each hunk. Each old_text must occur exactly "
        "once in its file as it is now. Edits already proposed in this task are not proposed twice; an edit the "
        "developer rejected before is refused and reported with the developer's feedback. The answer lists the new "
        "hunks and their ids."
    ),
    "propose_patch": (
        "Propose a change for the developer to review, as a unified diff (the format `git diff` "
        "writes: ---/+++ headers with a/ and b/ prefixes, @@ hunk headers, context lines). Nothing is written to the "
        "files: the developer accepts, rejects (with feedback) or edits each hunk. The diff must fit the files as "
        "they are; a diff made before some of this task's hunks were applied is carried onto the files. Hunks "
        "already proposed in this task are not proposed twice; a hunk the developer rejected before is refused and "
        "reported with the developer's feedback. New, deleted and renamed files are supported."
    ),
    "review_status": (
        "See where the developer's review stands: every hunk of a task (or of the workspace) by status, "
        "with the developer's feedback on rejected hunks and their own text on hunks they changed before accepting. "
        "Check it before proposing more."
    ),
    "wait_for_decisions": (
        "Wait until the developer has decided every hunk of a proposal (accepted, rejected, or replaced), or until "
        "the timeout, then get the decisions: each hunk's status, the developer's feedback on rejected hunks and "
        "their own text on hunks they changed before accepting. Call it after propose_edits or propose_patch instead "
        "of polling review_status; on a timeout, the hunks still waiting are listed and you may wait again."
    ),
    "finish_task": (
        "Close the task: done when the goal is met (and the developer has nothing pending), or abandoned. "
        "Give a one-line summary."
    ),
}


class Tools:
    """The tools, one method each, over the review the server's lifespan opens."""

    def __init__(self, state: _State, db_path: str, roots: list[str], agent: str | None) -> None:
        self.state, self.db_path, self.roots, self.agent = state, db_path, roots, agent
        self.handle = state.handle = Reconnecting(roots, db_path, adopt=_noticed)

    @asynccontextmanager
    async def lifespan(self, _server: MCPServer) -> AsyncIterator[_State]:
        state = self.state
        # A store that cannot be used: every tool says so, clearly, instead of the server failing to start.
        await self.handle.attempt()
        try:
            yield state
        finally:
            if state.changes is not None:
                await state.changes.stop()
            if state.review is not None:
                await state.review.close()

    async def tasks(self) -> Tasks:
        try:
            return Tasks(await self.handle.current())
        except StetError as exc:
            raise _fail(exc) from None

    async def start_task(
        self,
        title: Annotated[str, Field(description="Short title, e.g. 'Rate-limit the login endpoint'.")],
        goal: Annotated[str, Field(description="What the developer asked for, and what done means.")],
        task_id: Annotated[
            str | None, Field(description="Your own id for the task (default: one is made from the title).")
        ] = None,
        request_id: Annotated[
            str | None, Field(description="Optional id of this call: repeating it changes nothing.")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        out = task_json.written(
            await _run(t.start(title, goal, agent=self.agent, task_id=task_id, request_id=request_id)), t.review.ws.rel
        )
        row = out["task"]
        verb = "Started" if out["created"] else "Already started:"
        return _result(f"{verb} task {row['id']} ({row['title']}). Use task_id={row['id']!r} in the other tools.", out)

    async def list_tasks(
        self,
        status: Annotated[
            Literal["open", "done", "abandoned"] | None, Field(description="Only tasks with this status.")
        ] = None,
    ) -> CallToolResult:
        items = task_json.listed(await _run((await self.tasks()).list(status)))
        if not items:
            return _result("No tasks yet.", {"tasks": []})
        lines = [
            f"- {t['id']} [{t['status']}] {t['title']}"
            + (f" ({', '.join(f'{n} {s}' for s, n in t['counts'].items())})" if t["counts"] else "")
            for t in items
        ]
        return _result("\n".join(lines), {"tasks": items})

    async def get_task_context(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        format: Annotated[
            Literal["markdown", "json"], Field(description="markdown (default) to read, json for code.")
        ] = "markdown",
    ) -> CallToolResult:
        t = await self.tasks()
        ctx = task_json.context(await _run(t.context(task_id)), t.review.ws.rel)
        text = render(ctx) if format == "markdown" else json.dumps(ctx, indent=1, ensure_ascii=False)
        return _result(text, ctx)

    async def record_step(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        text: Annotated[
            str | None,
            Field(description="The step, e.g. 'Add a limiter to login()'. A new step unless one has this exact text."),
        ] = None,
        status: Annotated[
            Literal["pending", "in_progress", "completed", "pending_confirmation"] | None,
            Field(description="The step's status (default for a new step: pending)."),
        ] = None,
        number: Annotated[int | None, Field(description="Number of an existing step to change.")] = None,
        request_id: Annotated[
            str | None, Field(description="Optional id of this call: repeating it changes nothing.")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        out = task_json.written(
            await _run(t.step(task_id, text=text, status=status, n=number, request_id=request_id)), t.review.ws.rel
        )
        s = out["step"]
        return _result(f"Step {s['n']} [{s['status']}]: {s['text']}", out)

    async def record_note(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        text: Annotated[str, Field(description="The decision, question, answer or note, in one or two sentences.")],
        kind: Annotated[
            Literal["decision", "question", "answer", "note"], Field(description="What it is.")
        ] = "decision",
        why: Annotated[
            str | None, Field(description="For a decision: the reason (constraints, the developer's words).")
        ] = None,
        answers: Annotated[
            int | None, Field(description="For an answer: the number of the question it answers.")
        ] = None,
        request_id: Annotated[
            str | None, Field(description="Optional id of this call: repeating it changes nothing.")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        out = task_json.written(
            await _run(t.note(task_id, text, kind=kind, why=why, answers=answers, request_id=request_id)),
            t.review.ws.rel,
        )
        n = out["note"]
        return _result(f"Recorded {n['kind']} {n['n']}: {n['text']}", out)

    async def record_files_read(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        paths: Annotated[list[str], Field(description="File paths, relative to the workspace root.")],
        request_id: Annotated[
            str | None, Field(description="Optional id of this call: repeating it changes nothing.")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        out = task_json.written(await _run(t.read(task_id, paths, request_id=request_id)), t.review.ws.rel)
        lines = [f"- {f['path']}" + ("" if f["exists"] else " (does not exist)") for f in out["files"]]
        return _result("Recorded as read:\n" + "\n".join(lines), out)

    async def propose_edits(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        edits: Annotated[list[Edit], Field(description="The replacements, applied in order per file.")],
        message: Annotated[str | None, Field(description="Your rationale, shown to the developer.")] = None,
        proposal_id: Annotated[
            str | None, Field(description="Optional id for this proposal (default: derived from its content).")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        triples = [(e.path, e.old_text, e.new_text) for e in edits]
        answer = proposal_json.proposed(
            await _run(
                t.propose_text_edits(task_id, triples, proposal_id=proposal_id, agent=self.agent, message=message)
            )
        )
        return _result(_proposal_text(t, answer), answer)

    async def propose_patch(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        patch: Annotated[str, Field(description="The unified diff, paths relative to the workspace root.")],
        message: Annotated[str | None, Field(description="Your rationale, shown to the developer.")] = None,
        proposal_id: Annotated[
            str | None, Field(description="Optional id for this proposal (default: derived from its content).")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        answer = proposal_json.proposed(
            await _run(t.propose_patch(task_id, patch, proposal_id=proposal_id, agent=self.agent, message=message))
        )
        text = _proposal_text(t, answer)
        if answer.get("notes"):
            text += "\nNotes:\n" + "\n".join(f"- {n}" for n in answer["notes"])
        return _result(text, answer)

    async def review_status(
        self,
        task_id: Annotated[str | None, Field(description="Only this task's hunks (recommended).")] = None,
        proposal_id: Annotated[str | None, Field(description="Only this proposal's hunks.")] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        review = t.review
        try:
            await _up_to_date(review)  # the files may have changed since this process last looked
        except StetError as exc:
            raise _fail(exc) from None
        hunks = review.list(task_id=task_id, proposal_id=proposal_id)
        by_status: dict[str, list[dict[str, Any]]] = {s.value: [] for s in Status}
        for hunk in hunks:
            by_status[hunk.status.value].append(hunk_json.located(hunk, t.review.ws.rel))
        lines = []
        for status, items in by_status.items():
            if not items:
                continue
            lines.append(f"{status} ({len(items)}):")
            for h in items:
                line = f"- {h['id']} {h['path']} line {h['line']}"
                if h["feedback"]:
                    line += f" - developer: {' '.join(h['feedback'].split())}"
                if h["inFile"] is False:
                    line += " - applied, but its text is no longer in the file (removed since): not done"
                if h.get("appliedText") is not None:
                    line += " - accepted with the developer's own text (see get_task_context)"
                lines.append(line)
        return _result("\n".join(lines) if lines else "No hunks.", {"hunks": by_status})

    async def wait_for_decisions(
        self,
        proposal_id: Annotated[str, Field(description="The proposal id (from propose_edits or propose_patch).")],
        timeout_seconds: Annotated[
            float, Field(description="How long to wait at most, in seconds (0 to 600).", ge=0, le=600)
        ] = 60,
    ) -> CallToolResult:
        review = (await self.tasks()).review
        changes = self.state.changes_of(review)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_seconds
        try:
            await _up_to_date(review)  # what other processes decided, and the files as they are
        except StetError as exc:
            raise _fail(exc) from None
        settle_by: float | None = None
        while True:
            seen = changes.generation
            hunks = review.list(proposal_id=proposal_id)
            if not hunks:
                raise _fail(UnknownHunk(f"unknown proposal {proposal_id}", {"proposalId": proposal_id}))
            waiting = [h for h in hunks if h.status in (Status.PENDING, Status.STALE)]
            now = loop.time()
            if now >= deadline:
                break
            until = deadline
            if not waiting:
                # Decided; an accept whose edit is still being written (by the process that
                # decided it: committed first, written after) is given a moment to land, so the
                # agent hears "applied", not the instant in between.
                settle_by = min(deadline, now + SETTLE) if settle_by is None else settle_by
                if now >= settle_by or not any(h.status == Status.ACCEPTED and h.problem is None for h in hunks):
                    break
                until = settle_by
            # One look at the store for every waiter, woken by the store's change signal.
            await changes.wait(seen, until - now)
            if changes.error is not None:
                raise _fail(changes.error)
        return _decisions_result(review, proposal_id, hunks, timed_out=bool(waiting))

    async def finish_task(
        self,
        task_id: Annotated[str, Field(description="The task id.")],
        status: Annotated[Literal["done", "abandoned"], Field(description="How it ended.")] = "done",
        summary: Annotated[str | None, Field(description="One line: what was achieved, or why it stopped.")] = None,
        request_id: Annotated[
            str | None, Field(description="Optional id of this call: repeating it changes nothing.")
        ] = None,
    ) -> CallToolResult:
        t = await self.tasks()
        out = task_json.written(
            await _run(t.finish(task_id, status=status, summary=summary, request_id=request_id)), t.review.ws.rel
        )
        return _result(f"Task {task_id} is {out['task']['status']}.", out)


def build(db_path: str, roots: list[str], agent: str | None = None, state: _State | None = None) -> MCPServer:
    """The MCP server, its tools registered from the operations table; `state` receives the
    review once the server's lifespan opened it."""
    tools = Tools(state if state is not None else _State(), db_path, roots, agent)
    server = MCPServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, lifespan=tools.lifespan, log_level="WARNING"
    )
    for op in offered_by("mcp"):
        name = str(op.mcp)
        server.add_tool(getattr(tools, name), name=name, description=DESCRIPTIONS[name])
    return server


def _decisions_result(review: Review, proposal_id: str, hunks: list[Hunk], timed_out: bool) -> CallToolResult:
    """The decisions on a proposal's hunks, for the model and as data."""
    items = [hunk_json.decided(h, review.ws.rel) for h in hunks]
    lines = [
        f"Proposal {proposal_id}: "
        + ("still waiting for the developer (timed out)" if timed_out else "every hunk is decided")
    ]
    for i in items:
        line = f"- {i['id']} {i['path']} line {i['line']}: {i['status']}"
        if i["status"] == "rejected":
            line += f" - developer: {' '.join((i['feedback'] or 'no feedback given').split())}"
        if "appliedText" in i:
            line += f" - accepted with the developer's own text: {i['appliedText']!r}"
        lines.append(line)
    data = {"proposalId": proposal_id, "timedOut": timed_out, "hunks": items}
    return _result("\n".join(lines), data)


def _proposal_text(t: Tasks, answer: dict[str, Any]) -> str:
    """What the model needs from a proposal's answer."""
    lines = [f"Proposal {answer['proposalId']}:"]
    new = answer["hunks"]
    if new:
        lines.append(f"{len(new)} hunk(s) for the developer to review:")
        lines += [
            f"- {h['id']} {t.review.ws.rel(h['uri'])} line {h['range']['start']['line'] + 1} [{h['status']}]"
            for h in new
        ]
    else:
        lines.append("No new hunks.")
    if answer.get("alreadyProposed"):
        lines.append("Already proposed in this task, not proposed again:")
        lines += [f"- {h['id']} {t.review.ws.rel(h['uri'])} [{h['status']}]" for h in answer["alreadyProposed"]]
    if answer.get("rejectedBefore"):
        lines.append("REJECTED by the developer before; not proposed again. Do something else, as the feedback says:")
        for h in answer["rejectedBefore"]:
            feedback = " ".join((h["feedback"] or "no feedback given").split())
            lines.append(f"- {h['id']} {t.review.ws.rel(h['uri'])}: {feedback}")
    return "\n".join(lines)


def _noticed(opened: Opened) -> bool:
    """A review just opened: what the user must be told (a damaged database moved aside) is logged."""
    if opened.notice:
        log.warning("%s", opened.notice)
    return True


def serve(db_path: str, roots: list[str], agent: str | None = None) -> None:
    logging.basicConfig(level=logging.WARNING, format="stet mcp %(levelname)s: %(message)s")
    state = _State()
    server = build(db_path, roots, agent, state)
    tune_for_a_long_run()
    try:
        server.run("stdio")
    finally:
        # If the lifespan's close did not run to the end (the client went away mid-shutdown),
        # stop the store's thread here or the process never exits.
        if state.review is not None:
            state.review.stop_now()
