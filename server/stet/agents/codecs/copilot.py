"""GitHub Copilot CLI's hooks, as the agent's loop (agents/turn.py) hears them and as Copilot
CLI reads the answers.

Its hooks (`.github/hooks/*.json`, events in camelCase) send `sessionId`, `timestamp`, `cwd`,
and for tool events `toolName` and `toolArgs` (an object, or its JSON text): `edit` with `path`,
`old_str`, `new_str` (found exactly once), `create` with `path`, `file_text`. The input does not
name its event: `stet integrate copilot` writes each hook as `stet hook copilot --event NAME`.
Events by meaning: preToolUse (before an edit), postToolUse (after), agentStop (end of turn).
Copilot CLI honours only preToolUse's answer (a flat `{"permissionDecision": "deny",
"permissionDecisionReason"}`): sessionStart and userPromptSubmitted could tell the agent nothing,
so Stet does not answer them (a decision counted as told would be lost); the agent learns the
developer's rejections from the deny's reason alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from ..turn import Agent, Answer, Change, Event, Meaning, ResultTooLarge

AGENT = Agent("copilot", "copilot-", "Copilot CLI", before_hook="preToolUse")
TOOLS = ("edit", "create")
MEANINGS = {"preToolUse": Meaning.BEFORE, "postToolUse": Meaning.AFTER, "agentStop": Meaning.END}
EVENTS = ("sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "sessionEnd")


def _text(payload: JSON, *keys: str) -> str:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    raise InvalidParams(f"the hook input has no {keys[0]}")


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    """The event Copilot CLI's hook input means (None: one Stet does nothing for)."""
    if not isinstance(payload, dict):
        raise InvalidParams("the hook input is not a JSON object")
    name = _text(payload, "hookEventName", "hook_event_name")
    session = _text(payload, "sessionId", "session_id")
    meaning = MEANINGS.get(name)
    if meaning is None:
        return None
    if meaning is Meaning.END:
        return Event(meaning, name, session)
    tool, args = payload.get("toolName"), payload.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    path = args.get("path") if isinstance(args, dict) else None
    cwd = payload.get("cwd")
    if tool not in TOOLS or not isinstance(path, str) or not path:
        return None
    if not os.path.isabs(path):
        if not isinstance(cwd, str):
            return None
        path = os.path.join(cwd, path)
    change = Change(os.path.normpath(path), str(tool), lambda before, limit: edited(before, tool, args, limit))
    return Event(meaning, name, session, changes=(change,))


def edited(before: str, tool: object, args: object, limit: int) -> str | None:
    """The file's text once the call is made (create: `file_text`; edit: `old_str`, found exactly
    once, replaced by `new_str`); None when the call will fail."""
    if not isinstance(args, dict):
        return None
    if tool == "create":
        text = args.get("file_text")
        if not isinstance(text, str):
            return None
        if len(text) > limit:
            raise ResultTooLarge(len(text))
        return text
    old, new = args.get("old_str"), args.get("new_str", "")
    if not isinstance(old, str) or not isinstance(new, str) or not old or before.count(old) != 1:
        return None
    if len(before) + len(new) - len(old) > limit:
        raise ResultTooLarge(len(before) + len(new) - len(old))
    return before.replace(old, new, 1)


def encode(event: Event, answer: Answer) -> JSON:
    """Only a deny: Copilot CLI reads no other answer."""
    if answer.deny is not None:
        return {"permissionDecision": "deny", "permissionDecisionReason": answer.deny}
    return {}
