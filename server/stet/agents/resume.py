"""`stet resume`: a task's context as Markdown, for people and for LLM agents.

Pure: the context dict of `present.task_json.build_context` in, text out. Written so that a
fresh worker reading it knows what not to redo, what not to re-propose and what not to
re-ask, and what is still open.
"""

from __future__ import annotations

import re

from ..domain.inert import inert, shown
from ..domain.shapes import JSON

MAX_DIFF_LINES = 40

STEP_ORDER = ("completed", "in_progress", "pending_confirmation", "pending")
STEP_TITLES = {
    "completed": "Completed",
    "in_progress": "In progress",
    "pending_confirmation": "Pending confirmation (waiting for the developer)",
    "pending": "Pending",
}

SECTIONS = (
    ("completed", "Completed (applied: in the files)", "Do not redo these."),
    (
        "removedSinceApplied",
        "Accepted, then removed from the files by someone",
        "The developer accepted these and they were applied, but their text is no longer in the files "
        "(an undo in the editor, a checkout, another tool or task). They are NOT done and NOT in the files: "
        "do not rely on them; ask the developer whether to re-apply them (the editor's Re-apply action, "
        "`stet reapply ID`) before proposing them again.",
    ),
    ("staged", "Staged (accepted, being written into the files)", "Do not redo these."),
    (
        "acceptedWithChanges",
        "Accepted with the developer's changes",
        "The developer edited your proposal before accepting it: their version is what counts. "
        "Do not redo these, and write later changes in the same way.",
    ),
    (
        "pendingConfirmation",
        "Pending confirmation",
        "The developer has not decided yet. Do not propose these again and do not ask about them.",
    ),
    (
        "rejected",
        "Rejected",
        "Do not propose these again. Follow the developer's feedback instead.",
    ),
    (
        "stale",
        "Stale",
        "The text under these changed, so they cannot apply; nobody decided. Re-read the file; "
        "re-propose only what is still needed.",
    ),
    ("superseded", "Superseded", "Replaced by later proposals."),
)


def render(ctx: JSON) -> str:
    """The Markdown of `stet resume`: what a new worker needs to carry the task on."""
    out = _heading(ctx) + _in_short(ctx) + _records(ctx) + _hunks(ctx)
    out += ["", "## Open questions", ""]
    if ctx["openQuestions"]:
        out += [f"{i}. {_one_line(q['text'])}" for i, q in enumerate(ctx["openQuestions"], start=1)]
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def _heading(ctx: JSON) -> list[str]:
    out: list[str] = []
    task = ctx["task"]
    if task is not None:
        out.append(f"# Task {_one_line(ctx['taskId'])}: {_one_line(task['title'])}")
        out.append("")
        facts = [f"**Status:** {task['status']}"]
        if task.get("agent"):
            facts.append(f"**agent:** {_one_line(task['agent'])}")
        facts.append(f"**started:** {task['createdAt']}")
        facts.append(f"**last activity:** {task['updatedAt']}")
        out.append(" · ".join(facts))
        if task.get("summary"):
            out += ["", f"**Summary:** {_one_line(task['summary'])}"]
        # Quoted, a line at a time: a goal of several lines cannot forge a heading of its own.
        out += ["", "## Goal", "", "> " + _quote(task["goal"]) if task["goal"] else "(no goal was recorded)"]
    else:
        out.append(f"# Task {_one_line(ctx['taskId'])}")
        out += ["", "No task was started with this id: only hunks proposed under it are known."]
    return out


def _in_short(ctx: JSON) -> list[str]:
    out: list[str] = []
    hunks = ctx["hunks"]
    out += ["", "## In short", ""]
    n = {k: len(v) for k, v in hunks.items()}
    out.append(
        f"- In the files or being written: {n['completed']} completed, {n['staged']} staged, "
        f"{n['acceptedWithChanges']} accepted with the developer's changes"
    )
    if n["removedSinceApplied"]:
        out.append(f"- Accepted, then removed from the files by someone: {n['removedSinceApplied']} (not done)")
    with_feedback = sum(1 for h in hunks["rejected"] if h["feedback"])
    out.append(
        f"- Waiting for the developer: {n['pendingConfirmation']} · rejected: {n['rejected']} "
        f"({with_feedback} with feedback) · stale: {n['stale']}"
    )
    if ctx["steps"]:
        tally = {s: sum(1 for x in ctx["steps"] if x["status"] == s) for s in STEP_ORDER}
        out.append("- Steps: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in tally.items() if v))
    changed = [f for f in ctx["filesRead"] if f["changedSinceRead"] and f["changedBy"] == "others"]
    if ctx["filesRead"]:
        out.append(f"- Files read: {len(ctx['filesRead'])}, {len(changed)} changed by someone else since")
    out.append(f"- Open questions: {len(ctx['openQuestions'])}")
    out += [
        "",
        "**How to carry on.** Do not redo or re-propose anything *completed*, *staged* or *accepted with the "
        "developer's changes*: it is in the files (the developer's version is the reference). Do not re-propose "
        "or ask about hunks *pending confirmation*: the developer has them. Do not propose again what was "
        "*rejected*: follow the feedback. Do not re-ask what the *decisions* and *answered questions* settle. "
        "Read files marked *changed since read* again before editing them.",
    ]
    return out


def _records(ctx: JSON) -> list[str]:
    """Steps, decisions, questions, notes and files read."""
    out: list[str] = []
    if ctx["steps"]:
        out += ["", "## Steps"]
        for status in STEP_ORDER:
            steps = [s for s in ctx["steps"] if s["status"] == status]
            if steps:
                out += ["", f"### {STEP_TITLES[status]}", ""]
                out += [f"{s['n']}. {_one_line(s['text'])}" for s in steps]

    if ctx["decisions"]:
        out += ["", "## Decisions", ""]
        for d in ctx["decisions"]:
            line = f"{d['n']}. {_one_line(d['text'])}"
            if d.get("why"):
                line += f" (why: {_one_line(d['why'])})"
            out.append(line)

    if ctx["questions"]:
        out += ["", "## Questions", ""]
        for q in ctx["questions"]:
            if q["answer"] is None:
                out.append(f"{q['n']}. {_one_line(q['text'])} (open)")
            else:
                out.append(
                    f"{q['n']}. {_one_line(q['text'])} (answered: {_one_line(q['answer']['text'])}; do not ask again)"
                )

    if ctx["notes"]:
        out += ["", "## Notes", ""]
        out += [
            f"{x['n']}. {_one_line(x['text'])}" + (f" ({_one_line(x['why'])})" if x.get("why") else "")
            for x in ctx["notes"]
        ]

    if ctx["filesRead"]:
        out += ["", "## Files read", ""]
        for f in ctx["filesRead"]:
            out.append(f"- `{shown(f['path'])}` (read {f['readAt']}): {_file_verdict(f)}")
    return out


def _hunks(ctx: JSON) -> list[str]:
    out: list[str] = []
    hunks = ctx["hunks"]
    out += ["", "## Hunks"]
    if not any(hunks.values()):
        out += ["", "No hunks proposed yet."]
    for key, title, advice in SECTIONS:
        items = hunks[key]
        if not items:
            continue
        out += ["", f"### {title} ({len(items)})", "", advice]
        for h in items:
            out += _hunk_section(key, h)
    return out


def _hunk_section(key: str, h: JSON) -> list[str]:
    out: list[str] = []
    label = {"create": " · new file", "delete": " · file deleted", "rename": " · file renamed"}.get(
        h.get("kind", "edit"), ""
    )
    out += ["", f"#### `{shown(h['path'])}` line {h['line']} · {h['id']} · {h['status']}{label}", ""]
    if h.get("message"):
        out.append(f"Rationale: {_one_line(h['message'])}")
        out.append("")
    if key == "rejected":
        if h["feedback"]:
            out.append(f"> **The developer's feedback:** {_quote(h['feedback'])}")
        else:
            out.append("> Rejected without feedback.")
        out.append("")
    if key == "acceptedWithChanges":
        if h.get("feedback"):
            out.append(f"> **The developer's note:** {_quote(h['feedback'])}")
            out.append("")
        out.append("The agent proposed:")
        out.append("")
        out += _fenced(_change_diff(h["oldText"], h["newText"]))
        out += ["", "How the developer changed it before accepting:", ""]
        out += _fenced(h["developerChanges"].rstrip("\n").split("\n"))
        return out
    out += _hunk_body(h)
    return out


def _file_verdict(f: JSON) -> str:
    if not f["changedSinceRead"]:
        return "unchanged since read" if f["exists"] else "did not exist when read, and still does not"
    if f["changedBy"] == "task":
        return "changed since read, only by this task's applied hunks"
    if not f["exists"]:
        return "**deleted since read**: it is gone"
    if f["hash"] is None:
        return "**created since read** (it did not exist then): read it"
    return "**changed since read** by someone else: read it again before relying on it"


def _hunk_body(h: JSON) -> list[str]:
    """A hunk's change: a diff for an edit; what happens to the file for a file operation."""
    kind = h.get("kind", "edit")
    if kind == "rename":
        to = shown(h.get("newPath") or h.get("newUri") or "")
        return [f"Rename: `{shown(h['path'])}` → `{to}` (the content is unchanged by it)."]
    if kind == "create":
        return [f"New file `{shown(h['path'])}` with this content:", "", *_fenced(_change_diff("", h["newText"]))]
    if kind == "delete":
        return [f"Deletes the file `{shown(h['path'])}`, which held:", "", *_fenced(_change_diff(h["oldText"], ""))]
    return _fenced(_change_diff(h["oldText"], h["newText"]))


def _change_diff(old: str, new: str) -> list[str]:
    return ["-" + line for line in _lines(old)] + ["+" + line for line in _lines(new)]


def _lines(text: str) -> list[str]:
    return [line.rstrip("\r\n") for line in text.splitlines(keepends=True)] if text else []


def _fenced(lines: list[str]) -> list[str]:
    lines = [inert(line, keep="\t") for line in lines]  # a line of code each, inside the fence
    if len(lines) > MAX_DIFF_LINES:
        extra = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"... ({extra} more lines)"]
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}diff", *lines, fence]


def _one_line(text: str) -> str:
    """An agent's text on one line, made inert (docs: domain/inert.py)."""
    return inert(" ".join(str(text).split()))


def _quote(text: str) -> str:
    """An agent's text of several lines as a Markdown quote: each line made inert, on a row of
    its own that starts with `> `."""
    return "\n> ".join(inert(line, keep="\t") for line in str(text).strip().splitlines())
