"""The agent's loop, for every agent: five meanings, whatever an agent calls them.

- START (a session starts, resumes, is cleared or compacted): tell it the open review;
- PROMPT (the developer sends a prompt): tell it each decision made since, once;
- BEFORE (an edit is about to be made): deny the redo of a change the developer rejected, with
  `The developer rejected this change to FILE: FEEDBACK`; else record each file's baseline (a
  file keeps the content first recorded in the turn);
- AFTER (an edit was made): record what it left, so a change made after it (the developer's) is
  told apart from the agent's; a file whose BEFORE never ran gets its baseline from the agent's
  own report, when that report gives exactly the file as it is now, else from the last commit;
- END (the turn ends): capture what the agent touched into pending hunks of the task
  `<prefix><session>` (`claude-…` for Claude Code, `codex-…`, `gemini-…`); with request changes
  (the hook's option, or the checkout's `git config stet.requestChanges`, which wins), send the
  agent back with the developer's rejections with feedback it was not told yet.

A codec (agents/codecs/) turns one agent's hook input into an `Event` and an `Answer` into that
agent's answer; this module knows no agent's field names, and the answers' texts are the same
for every agent (at most LIMIT characters, agent-written text escaped).
"""

from __future__ import annotations

import asyncio
import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..domain import headline
from ..domain.inert import inert
from ..domain.proposed import Captured
from ..domain.status import Status
from ..errors import OutsideWorkspace
from ..review import Review
from ..review.task_records import TaskRecords
from ..workspace import git, safe
from .capture import Capture
from .loop import LIMIT, Loop, bounded
from .snapshots import Snapshots
from .tasks import Tasks

YES = frozenset({"true", "yes", "on", "1"})
NO = frozenset({"false", "no", "off", "0"})


def checkout_asks(root: str) -> bool | None:
    """The checkout's `git config --local stet.requestChanges` (the editor's setting writes it):
    True or False when set to a yes or a no (true/yes/on/1, false/no/off/0), which wins over the
    hook's --request-changes; None when unset, another word, or git cannot tell (no git, not a
    checkout). Read at the end of a turn only: no other hook pays for a git process."""
    try:
        p = git.run(root, "config", "--local", "--get", "stet.requestChanges", ok=(0, 1))
    except git.GitError:
        return None
    word = p.stdout.decode("utf-8", "replace").strip().lower()
    return True if word in YES else False if word in NO else None


class Meaning(enum.Enum):
    START = "start"
    PROMPT = "prompt"
    BEFORE = "before"
    AFTER = "after"
    END = "end"


@dataclass(frozen=True)
class Agent:
    """Who the loop works for: its name as `stet integrate` takes it, the prefix of its
    sessions' tasks and the name people know it by."""

    name: str
    prefix: str
    title: str
    before_hook: str = "PreToolUse"  # its event before an edit, as its users know it

    def task_for(self, session_id: str) -> str:
        """The task a session's work goes under: `<prefix><session id>`, made safe."""
        return self.prefix + re.sub(r"[^A-Za-z0-9._-]", "-", session_id)[:200]


class ResultTooLarge(Exception):
    """The text an edit would make is longer than the limit: not built."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


@dataclass(frozen=True)
class Reported:
    """A file's text before an edit as the agent reported it (None: it did not exist), and
    what to call that source in a notice."""

    before: str | None
    source: str


@dataclass(frozen=True)
class Change:
    """One file an edit touches. `after(text)` is the file's text once the edit is made, from
    the text of `source` (the file itself, or the file a move takes it from) as it is now;
    None when it cannot be told. It raises ResultTooLarge for a text over `limit`."""

    path: str  # absolute
    tool: str  # the tool's name, for notices
    after: Callable[[str, int], str | None]
    source: str | None = None  # absolute; None: `path` itself
    reported: Reported | None = None


@dataclass(frozen=True)
class Event:
    meaning: Meaning
    name: str  # the agent's own name of the event (its answer may have to repeat it)
    session: str
    changes: tuple[Change, ...] = ()
    asked: Callable[[], str | None] = lambda: None  # END: the turn's prompt, when the agent tells it
    continuing: bool = False  # END: the agent already goes on because a stop hook asked it to


@dataclass
class Answer:
    """What the loop says: `context` for the model, `deny` / `ask` (a reason) for an edit,
    `notice` for the person, `block` (END: the agent is asked to go on with this); `told` what to give back to `Loop.untell` when it could not be
    delivered. The capture's own answer at END, for who wants it."""

    context: str | None = None
    deny: str | None = None
    ask: str | None = None
    notice: str | None = None
    block: str | None = None
    told: list[tuple[str, str | None]] = field(default_factory=list)
    captured: Captured | None = None


class Turn:
    """The loop of one agent over one review."""

    def __init__(self, review: Review, agent: Agent, *, keep: bool = True, request_changes: bool = False) -> None:
        self.review, self.agent, self.keep, self.request_changes = review, agent, keep, request_changes

    def loop(self) -> Loop:
        return Loop(self.review, self.agent.name, task_prefix=self.agent.prefix)

    async def handle(self, event: Event) -> Answer:
        task = self.agent.task_for(event.session)
        if event.meaning is Meaning.START:
            text, told = await self.loop().session_context()
            return Answer(context=text, told=told)
        if event.meaning is Meaning.PROMPT:
            text, told = await self.loop().news()
            return Answer(context=text, told=told)
        if event.meaning is Meaning.BEFORE:
            return await self._before(event, task)
        if event.meaning is Meaning.AFTER:
            return await self._after(event, task)
        return await self._end(event, task)

    # --- end of turn ---------------------------------------------------------------------
    async def _end(self, event: Event, task: str) -> Answer:
        answer = await self._capture(event, task)
        if not event.continuing and self._feedback_in(task) and await self._requests_changes():
            # Request changes: rejections with feedback not told yet send the agent back to work
            # (never while it already goes on from a stop hook: one round per stop, no loop).
            text, told = await self.loop().sent_back(task)
            if text is not None:
                answer.block, answer.told = text, told
        return answer

    def _feedback_in(self, task: str) -> bool:
        """Whether any hunk of the task stands rejected with feedback (told or not): without
        one there is nothing to send back, and the end of a turn pays no git process."""
        return any(h.status == Status.REJECTED and (h.feedback or "").strip() for h in self.review.list(task_id=task))

    async def _requests_changes(self) -> bool:
        """The checkout's setting when it says yes or no, else the hook's option."""
        roots = self.review.ws.roots
        asks = await asyncio.to_thread(checkout_asks, roots[0]) if roots else None
        return self.request_changes if asks is None else asks

    async def _capture(self, event: Event, task: str) -> Answer:
        if await Snapshots(self.review).current(task) is None:
            return Answer()  # the agent wrote nothing in this turn
        message = headline.line(self.agent.name, event.asked())
        answer = await Capture(self.review).run(
            task_id=task, keep=self.keep, agent=self.agent.name, message=message, turn_of=event.session
        )
        notice = stop_message(answer, task) if answer.proposal_id or answer.refused else None
        return Answer(notice=notice, captured=answer)

    # --- before an edit ------------------------------------------------------------------
    async def _inside(self, snapshots: Snapshots, changes: tuple[Change, ...]) -> list[tuple[Change, str]]:
        out = []
        for c in changes:
            try:
                out.append((c, snapshots.rel(c.path)))
            except OutsideWorkspace:
                continue  # not a file of this workspace (or Stet's and git's own): not reviewed here
        return out

    async def _before(self, event: Event, task: str) -> Answer:
        snapshots = Snapshots(self.review)
        inside = await self._inside(snapshots, event.changes)
        if not inside:
            return Answer()
        for change, rel in inside:
            said = await self._denied(snapshots, change, rel)
            if said is not None:
                return said
        await self._start(task, event.session)
        await snapshots.take(task, [c.path for c, _ in inside])
        return Answer()

    async def _start(self, task: str, session: str) -> None:
        if not await TaskRecords(self.review.state).exists(task):  # the first write of the session starts it
            await Tasks(self.review).start(
                f"{self.agent.title} session {session[:8]}", agent=self.agent.name, task_id=task
            )

    async def _text(self, path: str) -> str | None:
        """A file's text as it is now ("" when it does not exist); None when it is not text or
        larger than Stet reviews (its changes are not reviewed, so none is guarded)."""
        snapshots = Snapshots(self.review)
        try:
            raw = await self.review.bytes_now(snapshots.uri(snapshots.rel(path)), self.review.state.limits.max_bytes)
        except (safe.TooLarge, OutsideWorkspace):
            return None
        try:
            return "" if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            return None

    async def _denied(self, snapshots: Snapshots, change: Change, rel: str) -> Answer | None:
        """The deny when the change would make again a change the developer rejected."""
        review = self.review
        if not review.list(statuses=(Status.REJECTED,)):
            return None  # nothing was ever rejected: nothing to read
        uri = snapshots.uri(rel)
        before = await self._text(change.path)
        source = before if change.source is None else await self._text(change.source)
        if before is None or source is None:
            return None
        limit = review.state.limits.max_bytes
        try:
            after = change.after(source, limit)
        except ResultTooLarge as exc:
            return self._too_large(rel, uri, exc.size, limit)
        if after is None:
            return None
        hunk = self.loop().rejected_redo(rel, uri, before, after)
        if hunk is None:
            return None
        feedback = " ".join((hunk.feedback or "").split()) or "(no reason given)"
        return Answer(deny=f"The developer rejected this change to {rel}: {feedback}"[:LIMIT])

    def _too_large(self, rel: str, uri: str, size: int, limit: int) -> Answer | None:
        """An edit whose result is too large to check: nothing to say unless the developer
        rejected something in this file, then the developer is asked (never denied by a guess)."""
        review = self.review
        rejected = review.list(uri=uri, statuses=(Status.REJECTED,)) or [
            h for h in review.list(statuses=(Status.REJECTED,)) if review.ws.rel(h.uri) == rel
        ]
        if not rejected:
            return None
        return Answer(
            ask=(
                f"Stet cannot check this change to {rel} against the changes the developer rejected there: the file "
                f"would hold {size:,} characters (Stet checks and reviews at most {limit:,}); the developer decides"
            )[:LIMIT]
        )

    # --- after an edit -------------------------------------------------------------------
    async def _after(self, event: Event, task: str) -> Answer:
        snapshots = Snapshots(self.review)
        notes = []
        for change, rel in await self._inside(snapshots, event.changes):
            if await snapshots.agent_wrote(task, change.path):
                continue
            note = await self._unseen(snapshots, change, event.session, task, rel)
            if note is not None:
                notes.append(note)
        if not notes:
            return Answer()
        text = "\n".join(notes)[:LIMIT]
        return Answer(context=text, notice=text)

    async def _unseen(self, snapshots: Snapshots, change: Change, session: str, task: str, rel: str) -> str | None:
        """A write whose BEFORE never ran (the hook failed, timed out, or was not configured):
        nobody recorded the file before it. Its content before is taken from the agent's own
        report when that report and the call give exactly the file as it is now, else from the
        last commit; the turn's capture then reviews it as usual. Said either way: this change
        was not guarded."""
        review = self.review
        try:
            now = await review.bytes_now(snapshots.uri(rel), review.state.limits.max_bytes)
        except safe.TooLarge:
            return None  # larger than Stet reviews: BEFORE kept no copy for that reason, and the capture says so
        before, source = _reported_before(change, now, review.state.limits.max_bytes)
        if source is None:
            committed = await asyncio.to_thread(snapshots.committed, rel)
            before, source = (committed, "the last commit") if committed is not None else (None, None)
        shown, tool = inert(rel), inert(change.tool)
        hook = self.agent.before_hook
        if source is None:
            return (
                f"Stet did not see {shown} before this {tool} changed it (its {hook} hook did "
                "not run) and cannot tell what it held: the change is not captured for review and was not checked "
                "against the developer's rejections"
            )
        await self._start(task, session)
        await snapshots.take_as(task, rel, before)
        await snapshots.agent_wrote(task, change.path)
        return (
            f"Stet did not see {shown} before this {tool} changed it (its {hook} hook did "
            f"not run): the change was not checked against the developer's rejections; it is captured for review "
            f"at the end of the turn against {source}"
        )


def _reported_before(change: Change, now: bytes | None, limit: int) -> tuple[bytes | None, str | None]:
    """The file before the edit as the agent reported it, when the edit made from it gives
    exactly the file as it is now; (None, None) when it does not (the report is the agent's
    input: never taken on trust)."""
    reported = change.reported
    if now is None or reported is None:
        return None, None
    try:
        text = now.decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    try:
        made = change.after("" if reported.before is None else reported.before, limit)
    except ResultTooLarge:
        return None, None
    if made != text:
        return None, None
    return (None if reported.before is None else reported.before.encode("utf-8")), reported.source


def stop_message(answer: Captured, task: str) -> str:
    """The notice of a turn's capture: how many hunks wait, and the files not captured."""
    parts = []
    if answer.proposal_id:
        n = len(answer.hunks)
        where = "left in the files" if answer.keep else "taken out of the files"
        parts.append(f"Stet: {n} hunk(s) of this turn are waiting for review ({where}; task {task})")
    for r in answer.refused:
        parts.append(f"Stet: {r.path} not captured: {r.why}")
    return bounded(parts[0], parts[1:], more="`stet status` and the capture's answer") if parts else ""
