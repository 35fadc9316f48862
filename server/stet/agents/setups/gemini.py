"""`stet integrate gemini`: Gemini CLI's project configuration, `.gemini/settings.json`, merged
with what is there: its `hooks` (the same shape as Claude Code's: SessionStart, BeforeAgent,
BeforeTool and AfterTool on replace|write_file, AfterAgent, each running `stet hook gemini`) and
Stet's MCP server in `mcpServers` (added when absent, never changed).

Gemini CLI runs a project's hooks only in a trusted folder: `stet integrate gemini` says so.
"""

from __future__ import annotations

from typing import Any

from ...domain.shapes import JSON
from .claude_code import command_line, settings_and_mcp_with

AGENT = "gemini"
MATCHER = "replace|write_file"
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("BeforeAgent", None),
    ("BeforeTool", MATCHER),
    ("AfterTool", MATCHER),
    ("AfterAgent", None),
)
TRUST = (
    "Gemini CLI runs a project's hooks only in a trusted folder: trust this folder when Gemini CLI asks "
    "(or with /permissions); in an untrusted one it runs none of them"
)


def hook_command(stet: list[str], keep: bool, request_changes: bool = False) -> str:
    return command_line(stet, AGENT, keep, request_changes)


def settings_with_stet(settings: Any, command: str, stet: list[str]) -> tuple[JSON, list[str], str | None]:
    """The settings with Stet's hooks and MCP server; (settings, what changed, a warning)."""
    return settings_and_mcp_with(settings, command, stet, agent=AGENT, events=EVENTS, where=".gemini/settings.json")
