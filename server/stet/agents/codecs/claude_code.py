"""Claude Code's hooks, as the agent's loop (agents/turn.py) hears them and as Claude Code reads
the answers.

Claude Code runs a hook command with one JSON object on stdin (`session_id`, `cwd`,
`hook_event_name`, and for tool events `tool_name` and `tool_input`, whose `file_path`
names the file an Edit, MultiEdit or Write changes, `notebook_path` the notebook a NotebookEdit
changes). Its events by meaning: SessionStart (start), UserPromptSubmit (prompt), PreToolUse on
Edit|MultiEdit|Write|NotebookEdit (before an edit; a deny is `hookSpecificOutput.permissionDecision:
"deny"` with the reason), PostToolUse on them (after; its `tool_response` reports the file before
the call: `originalFile`, or `type: "create"`), Stop (end of turn: the hunks' message is
`claude-code: <the turn's prompt>`, the prompt read from the end of the session's transcript when
it can be, cheaply and safely).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams, StetError
from ...workspace import safe
from ..turn import Agent, Answer, Change, Event, Meaning, Reported, ResultTooLarge

AGENT = Agent("claude-code", "claude-", "Claude Code")
WRITE_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
TRANSCRIPT_TAIL = 4 << 20  # bytes of a transcript read back from its end, at most
MEANINGS = {
    "SessionStart": Meaning.START,
    "UserPromptSubmit": Meaning.PROMPT,
    "PreToolUse": Meaning.BEFORE,
    "PostToolUse": Meaning.AFTER,
    "Stop": Meaning.END,
}


def text_field(payload: JSON, key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidParams(f"the hook input has no {key}")
    return value


def heading(
    payload: Any, meanings: Mapping[str, Meaning], session_key: str = "session_id"
) -> tuple[JSON, str, str, Meaning] | None:
    """A hook input's object, event name, session and meaning; None for an event Stet does
    nothing for. Not an object, or without its event or session: refused (InvalidParams)."""
    if not isinstance(payload, dict):
        raise InvalidParams("the hook input is not a JSON object")
    name = text_field(payload, "hook_event_name")
    session = text_field(payload, session_key)
    meaning = meanings.get(name)
    return None if meaning is None else (payload, name, session, meaning)


def file_of(payload: JSON) -> str | None:
    """The file a write tool call names (None: another tool, or no file)."""
    tool = payload.get("tool_name")
    if tool not in WRITE_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    path = tool_input.get(key) if isinstance(tool_input, dict) else None
    return path if isinstance(path, str) and path else None


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    """The event Claude Code's hook input means (None: one Stet does nothing for). `env` is the
    hook's caller's environment (None: this process's), which says where Claude Code keeps its
    transcripts."""
    head = heading(payload, MEANINGS)
    if head is None:
        return None
    payload, name, session, meaning = head
    if meaning in (Meaning.BEFORE, Meaning.AFTER):
        path = file_of(payload)
        if path is None:
            return None
        tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
        reported = _reported(payload) if meaning is Meaning.AFTER else None
        change = Change(
            path=path,
            tool=str(tool),
            after=lambda before, limit: edited(before, tool, tool_input, limit=limit),
            reported=reported,
        )
        return Event(meaning, name, session, changes=(change,))
    if meaning is Meaning.END:
        transcript = payload.get("transcript_path")
        return Event(
            meaning,
            name,
            session,
            asked=lambda: turn_prompt(transcript, session, env),
            continuing=payload.get("stop_hook_active") is True,
        )
    return Event(meaning, name, session)


def _reported(payload: JSON) -> Reported | None:
    """The file before the call as PostToolUse reports it (`type: "create"` of a Write, or
    `originalFile`); the loop checks it against the file before taking it."""
    response = payload.get("tool_response")
    if not isinstance(response, dict):
        return None
    if response.get("type") == "create" and payload.get("tool_name") == "Write":
        return Reported(None, "the file not existing before")
    original = response.get("originalFile")
    if not isinstance(original, str):
        return None
    return Reported(original, "the file as Claude Code reported it before the call")


def encode(event: Event, answer: Answer) -> JSON:
    """The answer as Claude Code reads it ({}: nothing to print)."""
    if answer.deny is not None or answer.ask is not None:
        decision, reason = ("deny", answer.deny) if answer.deny is not None else ("ask", answer.ask)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        }
    out: JSON = {}
    if answer.block is not None:
        out.update({"decision": "block", "reason": answer.block})
    if answer.notice:
        out["systemMessage"] = answer.notice
    if answer.context is not None:
        out["hookSpecificOutput"] = {"hookEventName": event.name, "additionalContext": answer.context}
    return out


def edited(before: str, tool: object, tool_input: object, limit: int | None = None) -> str | None:
    """The file's text once the tool call is made (Edit: old_string -> new_string, once or with
    replace_all everywhere; MultiEdit: its edits in order; Write: content); None when it cannot
    be told (the call will fail, or its input is not what Claude Code sends). Raises
    ResultTooLarge, before building it, for a text longer than `limit` characters (a
    replace_all of a short string by a long one multiplies the file)."""
    if not isinstance(tool_input, dict):
        return None
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else None
    if tool == "NotebookEdit":
        return notebook_edited(before, tool_input, limit)
    edits = [tool_input] if tool == "Edit" else tool_input.get("edits") if tool == "MultiEdit" else None
    if not isinstance(edits, list):
        return None
    text = before
    for e in edits:
        old, new = (e.get("old_string"), e.get("new_string")) if isinstance(e, dict) else (None, None)
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        every = e.get("replace_all") is True
        if limit is not None:
            size = len(text) + (text.count(old) if every else 1) * (len(new) - len(old))
            if size > limit:
                raise ResultTooLarge(size)
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text


def notebook_edited(before: str, tool_input: JSON, limit: int | None = None) -> str | None:
    """A notebook's text once NotebookEdit replaced a cell's source (found by `cell_id`) or
    deleted the cell, written back in the notebook's own layout (its indent, its key order,
    sources as lists of lines or as strings); None when that cannot be told exactly (another
    layout, an insert - whose new cell's id Claude Code chooses -, no such cell): never a guess."""
    mode = tool_input.get("edit_mode", "replace")
    cell_id, source = tool_input.get("cell_id"), tool_input.get("new_source")
    if mode not in ("replace", "delete") or not isinstance(cell_id, str):
        return None
    if mode == "replace" and (not isinstance(source, str) or (limit is not None and len(source) > limit)):
        return None
    try:
        notebook = json.loads(before)
    except ValueError:
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    found = (
        [i for i, c in enumerate(cells) if isinstance(c, dict) and c.get("id") == cell_id]
        if isinstance(cells, list)
        else []
    )
    if len(found) != 1:
        return None
    layout = _layout(notebook, before)
    if layout is None:
        return None
    assert isinstance(cells, list)
    if mode == "delete":
        del cells[found[0]]
    elif isinstance(source, str):
        cell = cells[found[0]]
        cell["source"] = source.splitlines(keepends=True) if isinstance(cell.get("source"), list) else source
        kind = tool_input.get("cell_type")
        if kind in ("code", "markdown") and kind != cell.get("cell_type"):
            return None  # a change of kind changes more than the source (outputs): not told exactly
    after = json.dumps(notebook, indent=layout[0], ensure_ascii=layout[1]) + layout[2]
    return None if limit is not None and len(after) > limit else after


def _layout(notebook: object, text: str) -> tuple[int, bool, str] | None:
    """(indent, ensure_ascii, ending) that write `notebook` back as exactly `text`, or None."""
    ending = "\n" if text.endswith("\n") else ""
    for indent in (1, 2, 4):
        for ascii_only in (False, True):
            if json.dumps(notebook, indent=indent, ensure_ascii=ascii_only) + ending == text:
                return indent, ascii_only, ending
    return None


def transcripts_folder(env: Mapping[str, str] | None = None) -> str:
    """Where Claude Code keeps its sessions' transcripts: `$CLAUDE_CONFIG_DIR/projects`, else
    `~/.claude/projects` (`<project folder>/<session id>.jsonl` in there), in `env` (None: this
    process's environment)."""
    env = os.environ if env is None else env
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(config, "projects")


def _open_transcript(
    transcript: str, session: str, env: Mapping[str, str] | None = None
) -> tuple[int, os.stat_result] | None:
    """A read handle on the session's own transcript, only where Claude Code keeps it: the file
    `<session id>.jsonl` under transcripts_folder() (as given or resolved), reached below that
    folder without following any symlink, a regular file. None otherwise: a hook's input names
    the file, and over HTTP anyone with the token writes that input."""
    if os.path.basename(transcript) != f"{session}.jsonl" or not os.path.isabs(transcript):
        return None
    path = os.path.normpath(transcript)
    base = transcripts_folder(env)
    for top in dict.fromkeys((os.path.normpath(base), os.path.realpath(base))):
        if not path.startswith(top.rstrip("/") + "/"):
            continue
        try:
            fd = os.open(os.path.realpath(base), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            for part in os.path.relpath(os.path.dirname(path), top).split("/"):
                if part in ("", "."):
                    continue
                below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = below
            return safe.open_file(fd, os.path.basename(path), transcript)
        except (StetError, OSError):
            return None
        finally:
            os.close(fd)
    return None


def turn_prompt(transcript: object, session: str, env: Mapping[str, str] | None = None) -> str | None:
    """What the developer asked in this turn: the last prompt they typed, read from the end of
    Claude Code's transcript (JSON lines; `transcript_path` of every hook input), only the
    session's own where Claude Code keeps it (_open_transcript). At most TRANSCRIPT_TAIL bytes
    are read, never through a symlink nor from a FIFO or a device; None when it cannot be told
    that way."""
    if not isinstance(transcript, str):
        return None
    opened = _open_transcript(transcript, session, env)
    if opened is None:
        return None
    fd, st = opened
    try:
        start = max(0, st.st_size - TRANSCRIPT_TAIL)
        data = os.pread(fd, st.st_size - start, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    for raw in reversed(lines[1:] if start else lines):  # a line cut by the start is not read
        if b'"user"' in raw:
            prompt = _typed(raw)
            if prompt is not None:
                return prompt
    return None


def _typed(raw: bytes) -> str | None:
    """The prompt of one transcript line, if it is one the developer typed (not a tool's result,
    an injected note, a compaction summary, a local command's output, or an entry Claude Code
    wrote itself: a background subagent's `<task-notification>`, marked `promptSource: "system"`
    and `origin.kind: "task-notification"`)."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("type") != "user"
        or entry.get("isMeta")
        or entry.get("isCompactSummary")
        or _by_claude_code(entry)
    ):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(not isinstance(b, dict) or b.get("type") != "text" for b in content):
            return None  # tool results (and images): not a typed prompt
        content = " ".join(str(b.get("text", "")) for b in content)
    if not isinstance(content, str) or not content.strip() or content.lstrip().startswith(NOT_TYPED):
        return None
    return content


NOT_TYPED = ("<command-", "<local-", "<task-notification>")  # what Claude Code writes as a user entry


def _by_claude_code(entry: JSON) -> bool:
    """A user entry Claude Code wrote itself (its source "system", or an origin other than a
    prompt, e.g. a finished background task), wherever the entry carries the marks."""
    for where in (entry, entry.get("message")):
        if not isinstance(where, dict):
            continue
        origin = where.get("origin")
        kind = origin.get("kind") if isinstance(origin, dict) else None
        if where.get("promptSource") == "system" or kind == "task-notification":
            return True
    return False
