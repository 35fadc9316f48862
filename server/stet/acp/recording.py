"""An ACP session's proposed changes recorded as kept hunks of its task, before the message goes on.

ACP edits are written by the editor (`fs/write_text_file`) or by the agent, never by Stet: a
recorded change is a *kept* hunk (the agent's text is, or is about to be, in the file, waiting
for review; accept keeps it, reject reverts it), the kind the agents' hooks capture. A change
reaches Stet as a file's text before and after it (`resolve` places a diff's snippet in the
file), and is captured over the file as it is: its task's own kept hunks already in the file
taken out of the baseline (agents/capture.py `layered`), so one capture of the file holds them
all and nothing is proposed twice. Nothing is written to the file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from ..agents.capture import Capture, Found
from ..agents.snapshots import Snapshots
from ..agents.tasks import Tasks
from ..domain import patches
from ..domain.model import Hunk
from ..domain.status import Status
from ..errors import Conflict
from ..faults import fault
from ..review import Review
from ..review.task_records import TaskRecords
from ..workspace import contents


class NotRecorded(Exception):
    """A change Stet does not record (outside the workspace, binary, too large, not placed):
    the message goes on; why is logged once."""


@dataclass(frozen=True)
class Resolved:
    """A change to one file: its text before (None: no file), after, and what it holds now."""

    before: str | None
    after: str
    on_disk: str | None


def resolve(old: str | None, new: str, now: str | None, *, made: bool) -> Resolved:
    """A diff (`old` None: a new file; else the whole file or a snippet without context)
    placed in the file as it is (`now`; None: no file). `made`: the change is reported done
    (a completed tool call), so the file is looked at for its new text first. NotRecorded when
    the snippet is not found exactly once."""
    if old is None:
        return Resolved(None if now in (None, new) else now, new, now)
    if now is None:
        raise NotRecorded("the file does not exist and the diff changes a text in it")
    if old == now:
        return Resolved(now, new, now)
    if new == now and made:
        return Resolved(old, new, now)  # the whole file, written already
    steps = (_made, _to_make) if made else (_to_make, _made)
    for step in steps:
        r = step(old, new, now)
        if r is not None:
            return r
    return _why_not(old, now)


def _to_make(old: str, new: str, now: str) -> Resolved | None:
    if old and now.count(old) == 1:
        return Resolved(now, now.replace(old, new, 1), now)
    return None


def _made(old: str, new: str, now: str) -> Resolved | None:
    if new and now.count(new) == 1 and (old in new or old not in now):
        return Resolved(now.replace(new, old, 1), now, now)
    return None


def _why_not(old: str, now: str) -> Resolved:
    n = now.count(old) if old else 0
    where = "not found in the file" if n == 0 else f"found {n} times in the file"
    raise NotRecorded(f"the diff's old text is {where}: recorded when its write or its completed update comes")


def resolve_patch(f: patches.FilePatch, now: str | None, *, made: bool) -> Resolved:
    """One file's patch (ACP v2's `git_patch`: hunks with context, exact line numbers) placed
    in the file as it is (`now`; None: no file): forwards when the file holds the text before
    it, backwards when it holds the text after it (made already). `made`: the change is
    reported done, so backwards is tried first. NotRecorded when it fits neither way."""
    steps = (_undone, _done) if made else (_done, _undone)
    for step in steps:
        try:
            return step(f, now)
        except (patches.PatchError, patches.PatchMismatch):
            continue
    raise NotRecorded("the patch fits the file neither as it is nor as it would be after it")


def _done(f: patches.FilePatch, now: str | None) -> Resolved:
    after = patches.apply_file(f, now)
    if after is None:
        raise patches.PatchError("a deleted file: Stet records changes to a file's text")
    return Resolved(now, after, now)


def _undone(f: patches.FilePatch, now: str | None) -> Resolved:
    if now is None:
        raise patches.PatchError("no file: the change is not made")
    return Resolved(patches.apply_file(patches.reverse(f), now), now, now)


@dataclass(frozen=True)
class Recorded:
    """What recording a change made: the hunks it created (the change's own), and all the
    task's live hunks it repeated or created in that file."""

    rel: str
    after: str
    hunks: tuple[Hunk, ...]


class Recorder:
    """One session's task in one review: where its changes go."""

    def __init__(self, review: Review, agent: str, task_id: str, title: str) -> None:
        self.review, self.agent, self.task_id, self.title = review, agent, task_id, title

    def rel(self, path: str) -> str:
        """The workspace's path of an absolute path; NotRecorded outside it, in .git or .stet."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise NotRecorded("the path is not absolute")
        try:
            return Snapshots(self.review).rel(path)
        except Exception as exc:  # OutsideWorkspace, a name that is not text
            raise NotRecorded(str(getattr(exc, "message", exc))) from None

    def uri(self, rel: str) -> str:
        return Snapshots(self.review).uri(rel)

    async def now(self, rel: str) -> str | None:
        """The file's text as it is (None: no file); NotRecorded when not text or too large."""
        limit = self.review.state.limits.max_bytes
        path = self.review.ws.roots[0].rstrip("/") + "/" + rel
        try:
            data = await asyncio.to_thread(contents.read_regular, path, limit)
        except contents.TooLarge:
            raise NotRecorded(f"the file is larger than {limit} bytes: Stet does not review it") from None
        except (contents.NotAFile, OSError) as exc:
            raise NotRecorded(f"the file cannot be read ({exc})") from None
        return None if data is None else _text(data)

    def check(self, text: str | None) -> None:
        if text is None:
            return
        if "\x00" in text:
            raise NotRecorded("binary content: Stet reviews text")
        limit = self.review.state.limits.max_bytes
        if len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit:
            raise NotRecorded(f"the file would be larger than {limit} bytes: Stet does not review it")

    async def record(self, rel: str, change: Resolved, message: str | None) -> Recorded:
        """The change captured as kept hunks of the task (durable when this returns). The file
        must still hold `change.on_disk` (a Conflict else: read it again and resolve again)."""
        for text in (change.before, change.after):
            self.check(text)
        review = self.review
        await review.sync()  # the developer may have decided meanwhile (the baseline layers it)
        await self._start()
        capture = Capture(review)
        files = capture.layered(Found("acp", {rel: (change.before, change.after)}), self.task_id, exact=True)
        if not files:
            return Recorded(rel, change.after, ())
        changes, bases, results = capture.changes(files, {})
        uri = capture.uri(rel)
        # A change made again after it was rejected (the developer's no, or the editor's refused
        # permission) is a new pending hunk: Stet writes no file, so unless the redo is refused at
        # its permission, its text goes into the file, and the review must say so. Its key counts
        # the file's rejected hunks: the same report again (after a restart) is the same capture.
        rejected = sorted(h.id for h in review.by_uri.get(uri, {}).values() if h.status == Status.REJECTED)
        parts: list[object] = [self.task_id, rel, _h(bases.get(uri)), _h(results.get(uri)), _h(change.on_disk)]
        key = _key(parts + [_h(" ".join(rejected))] if rejected else parts)  # unchanged when none
        answer = await review.capture(
            "acp-" + key[:20],
            changes,
            bases,
            results,
            keep=True,
            in_place=False,
            on_disk={uri: change.on_disk},
            task_id=self.task_id,
            agent=self.agent,
            message=message,
            edit_hash=key,
            anew=frozenset(rejected),
        )
        fault("acp:after-record")  # durable, and the message that carried it not passed on yet
        return Recorded(rel, change.after, answer.hunks)

    async def _start(self) -> None:
        if not await TaskRecords(self.review.state).exists(self.task_id):  # the session's first change
            await Tasks(self.review).start(self.title, agent=self.agent, task_id=self.task_id)


async def record_fresh(
    recorder: Recorder, rel: str, place: Callable[[str | None], Resolved], message: str | None
) -> Recorded:
    """Read the file, place the change (`place(now) -> Resolved`), record it; once more when
    the file changed in between (a Conflict)."""
    for attempt in (0, 1):
        now = await recorder.now(rel)
        change = place(now)
        try:
            return await recorder.record(rel, change, message)
        except Conflict:
            if attempt:
                raise
    raise AssertionError("unreachable")


def _text(data: bytes) -> str:
    if b"\x00" in data:
        raise NotRecorded("binary content: Stet reviews text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotRecorded("not UTF-8 text: Stet reviews text") from None


def _h(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _key(parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
