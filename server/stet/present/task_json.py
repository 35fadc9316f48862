"""A task and the picture of it a new worker needs (`stet/taskContext`, `stet resume --json`,
MCP's `get_task_context`), as the doors send them: the rules are domain/task.py's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..domain.model import Hunk
from ..domain.shapes import JSON
from ..domain.status import Status
from ..domain.task import (
    FileRow,
    NoteRow,
    StepRow,
    TaskListed,
    TaskPicture,
    TaskRow,
    TaskWritten,
    changed_since_read,
    developer_changes,
)
from . import hunk_json

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


def task(row: TaskRow) -> JSON:
    return {
        "id": row.id,
        "title": row.title,
        "goal": row.goal,
        "agent": row.agent,
        "status": row.status,
        "summary": row.summary,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }


def step(row: StepRow) -> JSON:
    return {"n": row.n, "text": row.text, "status": row.status, "updatedAt": row.updated_at}


def note(row: NoteRow) -> JSON:
    out: JSON = {"n": row.n, "kind": row.kind, "text": row.text, "why": row.why, "at": row.at}
    if row.answers is not None:
        out["answers"] = row.answers
    return out


def written(w: TaskWritten, rel: Callable[[str], str]) -> JSON:
    """A task write's answer: `{task, created}` (start), `{taskId, step}`, `{taskId, note}` (with
    `repeated` when it was the same call again), `{taskId, files}` (read), `{task}` (finish)."""
    if w.sent is not None:
        return w.sent
    if w.kind == "start":
        assert w.task is not None
        return {"task": task(w.task), "created": w.created}
    if w.kind == "step":
        assert w.step is not None
        return {"taskId": w.task_id, "step": step(w.step)}
    if w.kind == "note":
        assert w.note is not None
        out: JSON = {"taskId": w.task_id, "note": note(w.note)}
        if w.repeated:
            out["repeated"] = True
        return out
    if w.kind == "read":
        files = [
            {"path": rel(r.uri), "uri": r.uri, "hash": r.hash, "exists": r.hash is not None, "readAt": r.read_at}
            for r in w.files
        ]
        return {"taskId": w.task_id, "files": files}
    assert w.task is not None
    return {"task": task(w.task)}


def listed(items: Sequence[TaskListed]) -> list[JSON]:
    """Tasks of a list, each with its hunk counts."""
    return [{**task(t.task), "counts": t.counts} for t in items]


def context(picture: TaskPicture, rel: Callable[[str], str]) -> JSON:
    """The picture of a task for a new worker (`build_context` of what the service read)."""
    p = picture
    return build_context(p.task_id, p.task, p.steps, p.notes, p.files, p.hunks, rel)


def file_read(row: FileRow, now: bytes | None, task_hunks: Sequence[Hunk]) -> JSON:
    """A file the agent read: its hash then and now, and whether it changed since and by whom
    (domain/task.py `changed_since_read`)."""
    current, by = changed_since_read(row, now, task_hunks)
    return {
        "hash": row.hash,
        "readAt": row.read_at,
        "currentHash": current,
        "exists": now is not None,
        "changedSinceRead": by is not None,
        "changedBy": by,
    }


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


def hunk_entry(h: Hunk, path: str, new_path: str | None = None) -> JSON:
    out = {**hunk_json.state(h), "path": path, "line": h.line + 1}
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
    task_row: TaskRow | None,
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
            questions.append({**note(n), "answer": None if a is None else {"text": a.text, "at": a.at, "n": a.n}})

    files_read = []
    for row, now in files:
        files_read.append({"path": rel(row.uri), "uri": row.uri, **file_read(row, now, hunks)})
    files_read.sort(key=lambda f: f["path"])

    open_questions = _open_questions(questions, steps, groups, files_read)

    return {
        "taskId": task_id,
        "task": None if task_row is None else task(task_row),
        "steps": [step(s) for s in steps],
        "decisions": [note(n) for n in notes if n.kind == "decision"],
        "questions": questions,
        "notes": [note(n) for n in notes if n.kind == "note"],
        "filesRead": files_read,
        "hunks": groups,
        "counts": counts,
        "openQuestions": open_questions,
    }
