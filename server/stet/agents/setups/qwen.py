"""`stet integrate qwen`: Qwen Code's project settings, `.qwen/settings.json`, merged with what
is there: its `hooks` in Claude Code's shape (SessionStart, UserPromptSubmit, PreToolUse and
PostToolUse on its write tools, Stop, each running `stet hook qwen`) and Stet's MCP server in
`mcpServers` (added when absent, never changed)."""

from __future__ import annotations

from typing import Any

from ...domain.shapes import JSON
from ..codecs.qwen import TOOLS
from .claude_code import command_line, settings_and_mcp_with

AGENT = "qwen"
MATCHER = "|".join(TOOLS)
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PreToolUse", MATCHER),
    ("PostToolUse", MATCHER),
    ("Stop", None),
)


def hook_command(stet: list[str], keep: bool, request_changes: bool = False) -> str:
    return command_line(stet, AGENT, keep, request_changes)


def settings_with_stet(settings: Any, command: str, stet: list[str]) -> tuple[JSON, list[str], str | None]:
    """The settings with Stet's hooks and MCP server; (settings, what changed, a warning)."""
    return settings_and_mcp_with(settings, command, stet, agent=AGENT, events=EVENTS, where=".qwen/settings.json")
