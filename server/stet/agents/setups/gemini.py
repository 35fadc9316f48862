"""`stet integrate gemini`: Gemini CLI's project configuration, `.gemini/settings.json`, merged
with what is there: its `hooks` (the same shape as Claude Code's: SessionStart, BeforeAgent,
BeforeTool and AfterTool on replace|write_file, AfterAgent, each running `stet hook gemini`) and
Stet's MCP server in `mcpServers` (added when absent, never changed).

Gemini CLI runs a project's hooks only in a trusted folder: `stet integrate gemini` says so.
"""

from __future__ import annotations

from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from .claude_code import SERVER, command_hook, command_line, settings_with

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
    out, changed = settings_with(
        settings, {e: command_hook(command) for e, _ in EVENTS}, agent=AGENT, events=EVENTS, enable_mcp=False
    )
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidParams('"mcpServers" in .gemini/settings.json is not an object; fix it first')
    wanted = {"command": stet[0], "args": [*stet[1:], "mcp", "--agent", AGENT]}
    if SERVER not in servers:
        servers[SERVER] = wanted
        return out, [*changed, f"mcpServers.{SERVER}"], None
    if servers[SERVER] != wanted:
        return out, changed, f'.gemini/settings.json already has an MCP server named "{SERVER}"; left as it is'
    return out, changed, None
