"""Gemini CLI's hooks, as the agent's loop (agents/turn.py) hears them and as Gemini CLI reads
the answers.

Every input has `session_id`, `transcript_path`, `cwd`, `hook_event_name` and `timestamp`. Its
events by meaning: SessionStart (start), BeforeAgent (prompt), BeforeTool (before an edit:
`tool_name` "replace" with `file_path` (absolute), `old_string`, `new_string`, or "write_file"
with `file_path`, `content`), AfterTool (after: `tool_response.returnDisplay` reports
`originalContent`, null for a new file), AfterAgent (end of turn, with the turn's `prompt`,
which the hunks' message says; a deny there makes it go on: Stet answers one only to request
changes). Answers: `hookSpecificOutput.additionalContext` (reaches the model
as `<hook_context>`), a deny is `{"decision": "deny", "reason"}` (the model sees it as the call's
error), `systemMessage` shows the person a note.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...domain.shapes import JSON
from ..turn import Agent, Answer, Change, Event, Meaning, Reported, ResultTooLarge
from .claude_code import heading

AGENT = Agent("gemini", "gemini-", "Gemini CLI", before_hook="BeforeTool")
TOOLS = ("replace", "write_file")
MEANINGS = {
    "SessionStart": Meaning.START,
    "BeforeAgent": Meaning.PROMPT,
    "BeforeTool": Meaning.BEFORE,
    "AfterTool": Meaning.AFTER,
    "AfterAgent": Meaning.END,
}


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    """The event Gemini CLI's hook input means (None: one Stet does nothing for)."""
    head = heading(payload, MEANINGS)
    if head is None:
        return None
    payload, name, session, meaning = head
    if meaning in (Meaning.BEFORE, Meaning.AFTER):
        tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
        path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
        if tool not in TOOLS or not isinstance(path, str) or not path:
            return None
        cwd = payload.get("cwd")
        if not os.path.isabs(path):
            if not isinstance(cwd, str):
                return None
            path = os.path.join(cwd, path)
        reported = _reported(payload) if meaning is Meaning.AFTER else None
        change = Change(
            os.path.normpath(path),
            str(tool),
            lambda before, limit: edited(before, tool, tool_input, limit),
            reported=reported,
        )
        return Event(meaning, name, session, changes=(change,))
    prompt = payload.get("prompt") if meaning is Meaning.END else None  # AfterAgent tells the turn's prompt
    asked = prompt if isinstance(prompt, str) else None
    return Event(meaning, name, session, asked=lambda: asked, continuing=payload.get("stop_hook_active") is True)


def edited(before: str, tool: object, tool_input: object, limit: int) -> str | None:
    """The file's text once the call is made (write_file: its content; replace: `old_string`
    replaced where it is, exactly `expected_replacements` times (1 unless said), an empty
    `old_string` making a new file); None when the call will fail."""
    if not isinstance(tool_input, dict):
        return None
    if tool == "write_file":
        content = tool_input.get("content")
        if not isinstance(content, str):
            return None
        if len(content) > limit:
            raise ResultTooLarge(len(content))
        return content
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    expected = tool_input.get("expected_replacements", 1)
    if not isinstance(old, str) or not isinstance(new, str) or not isinstance(expected, int):
        return None
    if old == "":
        return new if before == "" else None
    if before.count(old) != expected or expected < 1:
        return None
    size = len(before) + expected * (len(new) - len(old))
    if size > limit:
        raise ResultTooLarge(size)
    return before.replace(old, new)


def _reported(payload: JSON) -> Reported | None:
    response = payload.get("tool_response")
    display = response.get("returnDisplay") if isinstance(response, dict) else None
    if not isinstance(display, dict) or "originalContent" not in display:
        return None
    original = display.get("originalContent")
    if original is None:
        return Reported(None, "the file not existing before")
    if not isinstance(original, str):
        return None
    return Reported(original, "the file as Gemini CLI reported it before the call")


def encode(event: Event, answer: Answer) -> JSON:
    """The answer as Gemini CLI reads it ({}: nothing printed)."""
    if answer.deny is not None:
        return {"decision": "deny", "reason": answer.deny}
    out: JSON = {}
    if answer.block is not None:  # AfterAgent: a deny makes the agent go on with the reason
        out.update({"decision": "deny", "reason": answer.block})
    notice = answer.notice or answer.ask
    if notice:
        out["systemMessage"] = notice
    if answer.context is not None:
        out["hookSpecificOutput"] = {"hookEventName": event.name, "additionalContext": answer.context}
    return out
