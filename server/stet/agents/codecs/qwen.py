"""Qwen Code's hooks: Claude Code's shape (the same events, fields and answers: agents/codecs/
claude_code.py), with Qwen Code's own tool names beside Claude Code's: `edit` and `replace`
(`file_path`, `old_string`, `new_string`, `replace_all`) mean Claude Code's Edit, `write_file`
(`file_path`, `content`) its Write; after its own tools, the file before the call is reported in
`tool_response.returnDisplay.originalContent` (as Gemini CLI does), not in Claude Code's fields. Sessions' tasks are `qwen-<session id>`; the turn's prompt
is not read from a transcript (Qwen Code keeps its own).

Qwen Code also fires UserPromptSubmit with an empty `prompt` after each round of tool results,
and appends that hook's `additionalContext` to the request after the results: a decision the
developer made while it works is told there, once, which is what a prompt means to the loop (no
special case: it is not lost, and not told again at the next prompt)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...domain.shapes import JSON
from ..turn import Agent, Answer, Event, Meaning, Reported
from . import claude_code

AGENT = Agent("qwen", "qwen-", "Qwen Code")
NATIVE = {"edit": "Edit", "replace": "Edit", "write_file": "Write"}
TOOLS = (*NATIVE, *claude_code.WRITE_TOOLS)


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    given = payload
    if isinstance(payload, dict) and payload.get("tool_name") in NATIVE:
        payload = {**payload, "tool_name": NATIVE[payload["tool_name"]]}
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k != "transcript_path"}
    event = claude_code.decode(payload, env)
    if event is not None and event.meaning is Meaning.AFTER and given.get("tool_name") in NATIVE:
        reported = _reported(given)
        if reported is not None:
            event = dataclasses.replace(
                event, changes=tuple(dataclasses.replace(c, reported=reported) for c in event.changes)
            )
    return event


def _reported(payload: JSON) -> Reported | None:
    """The file before the call as Qwen Code's own tools report it after (Gemini CLI's shape:
    `tool_response.returnDisplay.originalContent`, null for a file that did not exist); the loop
    takes it only when the call made from it gives exactly the file as it is now."""
    response = payload.get("tool_response")
    display = response.get("returnDisplay") if isinstance(response, dict) else None
    if not isinstance(display, dict) or "originalContent" not in display:
        return None
    original = display["originalContent"]
    if original is None:
        return Reported(None, "the file not existing before")
    return Reported(original, "the file as Qwen Code reported it") if isinstance(original, str) else None


def encode(event: Event, answer: Answer) -> JSON:
    return claude_code.encode(event, answer)
