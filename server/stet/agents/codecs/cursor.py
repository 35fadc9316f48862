"""Cursor's hooks (its editor's agent and its CLI agent share `.cursor/hooks.json`), as the
agent's loop (agents/turn.py) hears them and as Cursor reads the answers.

Every input has `conversation_id` (the session), `generation_id`, `hook_event_name` and
`workspace_roots`. Events by meaning: sessionStart (start: `{"additional_context"}`), preToolUse
on a file write (before an edit: `tool_input` with `file_path` and the whole `content`, or
`old_string` / `new_string`; a deny is `{"permission": "deny", "agent_message", "user_message"}`),
afterFileEdit (after: `file_path`, `edits` of old/new strings), stop (end of turn). Cursor's
beforeSubmitPrompt takes no context for the model, so decisions are told at the next session's
start only (a decision counted as told there would be lost). Cursor fails open: a hook that fails
lets the agent go on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...domain.shapes import JSON
from ..turn import Agent, Answer, Change, Event, Meaning, ResultTooLarge
from .claude_code import heading

AGENT = Agent("cursor", "cursor-", "Cursor", before_hook="preToolUse")
WRITE_TOOLS = ("Write", "Edit", "StrReplace", "edit_file", "write", "edit")
MEANINGS = {
    "sessionStart": Meaning.START,
    "preToolUse": Meaning.BEFORE,
    "afterFileEdit": Meaning.AFTER,
    "stop": Meaning.END,
}


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    """The event Cursor's hook input means (None: one Stet does nothing for)."""
    head = heading(payload, MEANINGS, "conversation_id")
    if head is None:
        return None
    payload, name, session, meaning = head
    if meaning is Meaning.BEFORE:
        tool_input = payload.get("tool_input")
        if payload.get("tool_name") not in WRITE_TOOLS or not isinstance(tool_input, dict):
            return None
        path = _path(payload, tool_input.get("file_path") or tool_input.get("path"))
        if path is None:
            return None
        change = Change(path, str(payload.get("tool_name")), lambda before, limit: edited(before, tool_input, limit))
        return Event(meaning, name, session, changes=(change,))
    if meaning is Meaning.AFTER:
        path = _path(payload, payload.get("file_path"))
        if path is None:
            return None
        return Event(meaning, name, session, changes=(Change(path, "edit", lambda before, limit: None),))
    loops = payload.get("loop_count")
    return Event(meaning, name, session, continuing=isinstance(loops, int) and loops > 0)


def _path(payload: JSON, path: object) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    if not os.path.isabs(path):
        roots = payload.get("workspace_roots")
        if not isinstance(roots, list) or not roots or not isinstance(roots[0], str):
            return None
        path = os.path.join(roots[0], path)
    return os.path.normpath(path)


def edited(before: str, tool_input: JSON, limit: int) -> str | None:
    """The file's text once the write is made (the whole `content`, or `old_string` found once
    replaced by `new_string`); None when it cannot be told."""
    content = tool_input.get("content", tool_input.get("contents"))
    if isinstance(content, str):
        if len(content) > limit:
            raise ResultTooLarge(len(content))
        return content
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or not old or before.count(old) != 1:
        return None
    if len(before) + len(new) - len(old) > limit:
        raise ResultTooLarge(len(before) + len(new) - len(old))
    return before.replace(old, new, 1)


def encode(event: Event, answer: Answer) -> JSON:
    """The answer as Cursor reads it ({}: nothing to say)."""
    if answer.deny is not None:
        return {"permission": "deny", "agent_message": answer.deny, "user_message": answer.deny}
    if answer.ask is not None:
        return {"permission": "ask", "agent_message": answer.ask, "user_message": answer.ask}
    if event.meaning is Meaning.START and answer.context is not None:
        return {"additional_context": answer.context}
    if answer.block is not None:  # stop: Cursor sends this as the next user message
        return {"followup_message": answer.block}
    return {}
