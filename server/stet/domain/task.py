"""Tasks: the agent's unit of work, and the picture of it a new worker needs.

Pure: records in, records out. The service reads the store and the files; this module
decides what the picture says: which hunks are done, staged, waiting, refused (with the
developer's words), taken with the developer's own changes, stale; which files changed
since the agent read them; what is still open.
"""

from __future__ import annotations

import calendar
import difflib
import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .anchor import LineIndex, locate
from .hunks import TextMismatch, apply_edits
from .model import Hunk
from .shapes import JSON
from .status import Status
from .text import split_lines

TASK_STATUSES = ("open", "done", "abandoned")
STEP_STATUSES = ("pending", "in_progress", "completed", "pending_confirmation")
NOTE_KINDS = ("decision", "question", "answer", "note")

# The hunk groups of a task's context, in the order a new worker should read them.
GROUPS = (
    "completed",  # applied: in the file
    "removedSinceApplied",  # applied, but its text is no longer in the file: not done
    "staged",  # accepted: decided, not yet in the file
    "acceptedWithChanges",  # accepted or applied, with the developer's own text
    "pendingConfirmation",  # pending: the developer has not decided
    "rejected",  # with the developer's feedback
    "stale",  # the text under it changed; nobody decided
    "superseded",
)


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

    def state(self) -> JSON:
        return {
            "id": self.id,
            "title": self.title,
            "goal": self.goal,
            "agent": self.agent,
            "status": self.status,
            "summary": self.summary,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


@dataclass
class StepRow:
    n: int
    text: str
    status: str
    updated_at: str
    lsn: int

    def state(self) -> JSON:
        return {"n": self.n, "text": self.text, "status": self.status, "updatedAt": self.updated_at}


@dataclass
class NoteRow:
    n: int
    kind: str
    text: str
    why: str | None
    answers: int | None  # for an answer: the number of the question it answers
    at: str
    lsn: int

    def state(self) -> JSON:
        out = {"n": self.n, "kind": self.kind, "text": self.text, "why": self.why, "at": self.at}
        if self.answers is not None:
            out["answers"] = self.answers
        return out


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


def file_status(row: FileRow, now: bytes | None, task_hunks: Sequence[Hunk]) -> JSON:
    """Has the file changed since the agent read it, and by whom?

    `changedBy` is "task" when taking back this task's own edits applied since the read
    gives the content that was read (the agent's accepted work, nothing else), "others"
    otherwise: then what the agent knows of the file is out of date.
    """
    current = content_hash(now)
    changed = current != row.hash
    by = None
    if changed:
        by = "task" if _only_the_tasks_edits(row, now, task_hunks) else "others"
    return {
        "hash": row.hash,
        "readAt": row.read_at,
        "currentHash": current,
        "exists": now is not None,
        "changedSinceRead": changed,
        "changedBy": by,
    }


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
def group_of(h: Hunk) -> str:
    if h.gone:  # accepted and applied, then removed by someone: not completed work
        return "removedSinceApplied"
    if h.status in (Status.ACCEPTED, Status.APPLIED) and h.applied_text is not None:
        return "acceptedWithChanges"
    return {
        Status.APPLIED: "completed",
        Status.ACCEPTED: "staged",
        Status.PENDING: "pendingConfirmation",
        Status.REJECTED: "rejected",
        Status.STALE: "stale",
        Status.SUPERSEDED: "superseded",
    }[h.status]


def developer_changes(h: Hunk, name: str = "") -> str:
    """The developer's edit of the agent's proposal, as a unified diff (proposal -> applied)."""
    if h.applied_text is None:
        return ""
    label = f" {name}" if name else ""
    diff = difflib.unified_diff(
        list(h.new), list(h.applied_text), f"proposed{label}", f"applied{label}", n=2, lineterm=""
    )
    return "\n".join(line.rstrip("\r\n") for line in diff) + "\n"


def hunk_entry(h: Hunk, path: str, new_path: str | None = None) -> JSON:
    out = {**h.state(), "path": path, "line": h.line + 1}
    if new_path is not None:
        out["newPath"] = new_path
    if h.applied_text is not None:
        out["developerChanges"] = developer_changes(h, path)
    return out


def _open_questions(
    questions: list[JSON], steps: Sequence[StepRow], groups: dict[str, list[JSON]], files_read: list[JSON]
) -> list[JSON]:
    """What a new worker must ask or check before going on."""
    open_questions: list[JSON] = []
    for q in questions:
        if q["answer"] is None:
            open_questions.append({"kind": "question", "text": q["text"], "note": q["n"]})
    for s in steps:
        if s.status == "pending_confirmation":
            open_questions.append(
                {
                    "kind": "stepNeedsConfirmation",
                    "text": f"Step {s.n} ({s.text}) waits for the developer's confirmation.",
                    "step": s.n,
                }
            )
    for e in groups["rejected"]:
        if not e["feedback"]:
            open_questions.append(
                {
                    "kind": "rejectedWithoutFeedback",
                    "text": f"The developer rejected hunk {e['id']} ({e['path']} line {e['line']}) without saying why.",
                    "hunkId": e["id"],
                }
            )
    for e in groups["removedSinceApplied"]:
        open_questions.append(
            {
                "kind": "removedSinceApplied",
                "text": f"Hunk {e['id']} ({e['path']} line {e['line']}) was accepted and applied, but its text is no "
                f"longer in the file: someone removed it since. It is not done; ask the developer whether it "
                f"should be re-applied.",
                "hunkId": e["id"],
            }
        )
    for e in groups["stale"]:
        open_questions.append(
            {
                "kind": "stale",
                "text": f"Hunk {e['id']} ({e['path']} line {e['line']}) no longer fits the file: the text under it "
                f"changed. Re-read the file; re-propose only if the change is still needed.",
                "hunkId": e["id"],
            }
        )
    for f in files_read:
        if f["changedSinceRead"] and f["changedBy"] == "others":
            what = "was deleted" if not f["exists"] else "was created" if f["hash"] is None else "changed"
            open_questions.append(
                {
                    "kind": "fileChanged",
                    "text": f"{f['path']} {what} since it was read ({f['readAt']}): read it again before relying on it.",
                    "path": f["path"],
                }
            )
    return open_questions


def build_context(
    task_id: str,
    task: TaskRow | None,
    steps: Sequence[StepRow],
    notes: Sequence[NoteRow],
    files: Sequence[tuple[FileRow, bytes | None]],
    hunks: Sequence[Hunk],
    rel: Callable[[str], str],
) -> JSON:
    """The structured picture of a task for a new worker (`stet/taskContext`, `stet resume --json`).

    `files` pairs each file read with its content now (None when it is gone); `rel` turns a
    uri into the path a person would type.
    """
    groups: dict[str, list[JSON]] = {g: [] for g in GROUPS}
    for h in sorted(hunks, key=lambda h: (rel(h.uri), h.line, h.proposal_id, h.seq)):
        groups[group_of(h)].append(hunk_entry(h, rel(h.uri), rel(h.new_uri) if h.new_uri else None))
    counts = {s.value: 0 for s in Status}
    for h in hunks:
        counts[h.status.value] += 1

    answers = {n.answers: n for n in notes if n.kind == "answer" and n.answers is not None}
    questions = []
    for n in notes:
        if n.kind == "question":
            a = answers.get(n.n)
            questions.append({**n.state(), "answer": None if a is None else {"text": a.text, "at": a.at, "n": a.n}})

    files_read = []
    for row, now in files:
        files_read.append({"path": rel(row.uri), "uri": row.uri, **file_status(row, now, hunks)})
    files_read.sort(key=lambda f: f["path"])

    open_questions = _open_questions(questions, steps, groups, files_read)

    return {
        "taskId": task_id,
        "task": task.state() if task is not None else None,
        "steps": [s.state() for s in steps],
        "decisions": [n.state() for n in notes if n.kind == "decision"],
        "questions": questions,
        "notes": [n.state() for n in notes if n.kind == "note"],
        "filesRead": files_read,
        "hunks": groups,
        "counts": counts,
        "openQuestions": open_questions,
    }
