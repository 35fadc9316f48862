"""Qwen Code's hooks: Claude Code's shape (the same events, fields and answers: agents/codecs/
claude_code.py), with Qwen Code's own tool names beside Claude Code's: `edit` and `replace`
(`file_path`, `old_string`, `new_string`, `replace_all`) mean Claude Code's Edit, `write_file`
(`file_path`, `content`) its Write. Sessions' tasks are `qwen-<session id>`; the turn's prompt
is not read from a transcript (Qwen Code keeps its own).

Qwen Code also fires UserPromptSubmit with an empty `prompt` after each round of tool results,
and appends that hook's `additionalContext` to the request after the results: a decision the
developer made while it works is told there, once, which is what a prompt means to the loop (no
special case: it is not lost, and not told again at the next prompt)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...domain.shapes import JSON
from ..turn import Agent, Answer, Event
from . import claude_code

AGENT = Agent("qwen", "qwen-", "Qwen Code")
NATIVE = {"edit": "Edit", "replace": "Edit", "write_file": "Write"}
TOOLS = (*NATIVE, *claude_code.WRITE_TOOLS)


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    if isinstance(payload, dict) and payload.get("tool_name") in NATIVE:
        payload = {**payload, "tool_name": NATIVE[payload["tool_name"]]}
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k != "transcript_path"}
    return claude_code.decode(payload, env)


def encode(event: Event, answer: Answer) -> JSON:
    return claude_code.encode(event, answer)
