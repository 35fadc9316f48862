"""Tasks: the agent's unit of work, and the rules of the picture of it a new worker needs.

Pure: records in, records out. The service reads the store and the files; this module
decides which files changed since the agent read them (and by whom), which re-proposed hunks
the developer has already, what the developer changed of a proposal. The picture itself, as
the doors send it, is present/task_json.py's.
"""

from __future__ import annotations

import calendar
import difflib
import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .anchor import LineIndex, locate
from .hunks import TextMismatch, apply_edits
from .model import Hunk
from .status import Status
from .text import split_lines

TASK_STATUSES = ("open", "done", "abandoned")
STEP_STATUSES = ("pending", "in_progress", "completed", "pending_confirmation")
NOTE_KINDS = ("decision", "question", "answer", "note")


@dataclass
class TaskRow:
    id: str
    title: str
    goal: str | None
    agent: str | None
    status: str
    summary: str | None
    created_at: str
    updated_at: str
    lsn: int


@dataclass
class StepRow:
    n: int
    text: str
    status: str
    updated_at: str
    lsn: int


@dataclass
class NoteRow:
    n: int
    kind: str
    text: str
    why: str | None
    answers: int | None  # for an answer: the number of the question it answers
    at: str
    lsn: int


# A note identical to the task's last one, sent again within this many seconds without a
# request id, is taken for a retry of the same call (recorded once): see `is_retry`.
RETRY_WINDOW = 600.0


def is_retry(last: NoteRow, kind: str, text: str, why: str | None, answers: int | None, now: float) -> bool:
    """Is a new note the same call again: the task's last note, identical, and recent?

    A client that times out and retries without a request id would otherwise record one
    decision twice. Recording the same decision twice in a row on purpose says nothing
    more, so nothing is lost by keeping one; a different note in between breaks the run."""
    if (last.kind, last.text, last.why, last.answers) != (kind, text, why, answers):
        return False
    try:
        at = calendar.timegm(time.strptime(last.at[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return False
    return 0 <= now - at <= RETRY_WINDOW


@dataclass
class FileRow:
    uri: str
    hash: str | None  # None: the file did not exist when it was read
    read_at: str
    lsn: int


def content_hash(data: bytes | None) -> str | None:
    """The hash recorded for a file's content (its bytes, exactly as stored); None: no file."""
    if data is None:
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --- files read ----------------------------------------------------------------------------
def without_hunks(text: str, hunks: Iterable[Hunk]) -> str | None:
    """`text` with these hunks' edits taken back out (their replacement back to the old
    text), or None when one of them cannot be found exactly once."""
    lines = split_lines(text)
    index = LineIndex(lines)
    edits = []
    for h in hunks:
        found = locate(index, h.replacement, h.line, h.ctx_before, h.ctx_after, trust_hint=False)
        if found is None:
            return None
        edits.append((found.line, h.replacement, h.old))
    try:
        return "".join(apply_edits(lines, edits))
    except TextMismatch:
        return None


def _only_the_tasks_edits(row: FileRow, now: bytes | None, task_hunks: Sequence[Hunk]) -> bool:
    """Whether taking back this task's edits applied since the read gives the content read. A
    hunk's lsn is the last operation that changed its row: one applied before the read and only
    moved since has a later one too, so the hunks decided after the read are tried as well."""
    if now is None or row.hash is None:
        return False
    try:
        text = now.decode("utf-8")
    except UnicodeDecodeError:
        return False
    mine = [h for h in task_hunks if h.uri == row.uri and h.status == Status.APPLIED and h.lsn > row.lsn]
    for taken in (mine, [h for h in mine if (h.decided_at or "") > row.read_at]):
        before = without_hunks(text, taken) if taken else None
        if before is not None and content_hash(before.encode("utf-8")) == row.hash:
            return True
    return False


def changed_since_read(row: FileRow, now: bytes | None, task_hunks: Sequence[Hunk]) -> tuple[str | None, str | None]:
    """Has the file changed since the agent read it, and by whom? Its hash now, and None when it
    is as read, else "task" when taking back this task's own edits applied since the read gives
    the content that was read (the agent's accepted work, nothing else), "others" otherwise:
    then what the agent knows of the file is out of date."""
    current = content_hash(now)
    if current == row.hash:
        return current, None
    return current, "task" if _only_the_tasks_edits(row, now, task_hunks) else "others"


# --- re-proposals ----------------------------------------------------------------------------
LIVE = (Status.PENDING, Status.ACCEPTED, Status.APPLIED)


def same_change(h: Hunk) -> tuple[object, ...]:
    return (h.uri, h.kind, h.new_uri, h.old_text, h.new_text)


def match_prior(new: Sequence[Hunk], prior: Sequence[Hunk]) -> tuple[list[Hunk], list[Hunk], list[Hunk]]:
    """Split a task's new hunks against the hunks it proposed before.

    Returns (to create, prior hunks repeated, prior rejected hunks repeated). A new hunk
    identical (same file, old text, new text) to a pending, accepted or applied one is not
    created again: the developer has it. One identical to a rejected hunk is not created
    either: the developer said no, and the caller reports the feedback. Each prior hunk
    answers for at most one new hunk (a change made in two places is two hunks).
    """
    live: dict[tuple[object, ...], list[Hunk]] = {}
    refused: dict[tuple[object, ...], list[Hunk]] = {}
    for h in sorted(prior, key=lambda h: (h.uri, h.line, h.seq)):
        if h.status in LIVE:
            live.setdefault(same_change(h), []).append(h)
        elif h.status == Status.REJECTED:
            refused.setdefault(same_change(h), []).append(h)
    create, repeated, rejected = [], [], []
    for h in new:
        key = same_change(h)
        if live.get(key):
            repeated.append(live[key].pop(0))
        elif refused.get(key):
            rejected.append(refused[key].pop(0))
        else:
            create.append(h)
    return create, repeated, rejected


# --- the context ---------------------------------------------------------------------------
def developer_changes(h: Hunk, name: str = "") -> str:
    """The developer's edit of the agent's proposal, as a unified diff (proposal -> applied)."""
    if h.applied_text is None:
        return ""
    label = f" {name}" if name else ""
    diff = difflib.unified_diff(
        list(h.new), list(h.applied_text), f"proposed{label}", f"applied{label}", n=2, lineterm=""
    )
    return "\n".join(line.rstrip("\r\n") for line in diff) + "\n"


# --- what the task service answers (each door presents it: present/task_json.py) ------------
@dataclass(frozen=True, slots=True)
class TaskWritten:
    """What a task write recorded: `start` the task (`created`: new, else it was started
    before), `step` the step added or changed, `note` the note (`repeated`: the same call
    again, recorded once), `read` the files read with their hashes then, `finish` the task as
    it is now. Kept in the operation log as its `record`, so that a replay answers the same;
    `sent`: the answer itself, as a Stet of before these records kept it (sent as it is)."""

    kind: str
    task_id: str
    task: TaskRow | None = None
    created: bool = False
    step: StepRow | None = None
    note: NoteRow | None = None
    repeated: bool = False
    files: tuple[FileRow, ...] = ()
    sent: dict[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        """Plain data for the operation log (`from_record` reads it back)."""
        return {
            "written": self.kind,
            "task_id": self.task_id,
            "task": None if self.task is None else asdict(self.task),
            "created": self.created,
            "step": None if self.step is None else asdict(self.step),
            "note": None if self.note is None else asdict(self.note),
            "repeated": self.repeated,
            "files": [asdict(f) for f in self.files],
        }

    @staticmethod
    def from_record(data: dict[str, Any]) -> TaskWritten:
        if "written" not in data:
            return TaskWritten("", "", sent=data)
        task, step, note = data["task"], data["step"], data["note"]
        return TaskWritten(
            data["written"],
            data["task_id"],
            None if task is None else TaskRow(**task),
            data["created"],
            None if step is None else StepRow(**step),
            None if note is None else NoteRow(**note),
            data["repeated"],
            tuple(FileRow(**f) for f in data["files"]),
        )


@dataclass(frozen=True, slots=True)
class TaskListed:
    """A task of a list, with how many of its hunks are in each status (those it has)."""

    task: TaskRow
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class TaskPicture:
    """What a new worker needs to carry a task on, as read: the task (None: known only from its
    hunks), its steps and notes, each file it read with the file's content now (None: gone),
    and its hunks. present/task_json.py's `build_context` makes the picture of it."""

    task_id: str
    task: TaskRow | None
    steps: tuple[StepRow, ...]
    notes: tuple[NoteRow, ...]
    files: tuple[tuple[FileRow, bytes | None], ...]
    hunks: tuple[Hunk, ...]
