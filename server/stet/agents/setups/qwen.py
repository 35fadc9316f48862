"""`stet integrate qwen`: Qwen Code's project settings, `.qwen/settings.json`, merged with what
is there: its `hooks` in Claude Code's shape (SessionStart, UserPromptSubmit, PreToolUse and
PostToolUse on its write tools, Stop, each running `stet hook qwen`) and Stet's MCP server in
`mcpServers` (added when absent, never changed)."""

from __future__ import annotations

from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from ..codecs.qwen import TOOLS
from .claude_code import SERVER, command_hook, command_line, settings_with

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
    out, changed = settings_with(
        settings, {e: command_hook(command) for e, _ in EVENTS}, agent=AGENT, events=EVENTS, enable_mcp=False
    )
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidParams('"mcpServers" in .qwen/settings.json is not an object; fix it first')
    wanted = {"command": stet[0], "args": [*stet[1:], "mcp", "--agent", AGENT]}
    if SERVER not in servers:
        servers[SERVER] = wanted
        return out, [*changed, f"mcpServers.{SERVER}"], None
    if servers[SERVER] != wanted:
        return out, changed, f'.qwen/settings.json already has an MCP server named "{SERVER}"; left as it is'
    return out, changed, None
