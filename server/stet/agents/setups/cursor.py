"""`stet integrate cursor`: Cursor's project hooks in `.cursor/hooks.json` (`{"version": 1,
"hooks": {EVENT: [{"command", "matcher"?}]}}`: sessionStart, preToolUse on its write tools,
afterFileEdit, stop, each running `stet hook cursor`) and Stet's MCP server in `.cursor/mcp.json`
(`mcpServers`), merged with what is there: Stet's own entries replaced, every other kept.

What Cursor's users miss: Cursor takes no context at a prompt (beforeSubmitPrompt), so the
developer's decisions reach the agent at a session's start and, for a rejected change it tries
again, in the deny's message.
"""

from __future__ import annotations

import copy
from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from ..codecs.cursor import WRITE_TOOLS
from .claude_code import command_line, runs_stet_hook

AGENT = "cursor"
SERVER = "stet"
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("sessionStart", None),
    ("preToolUse", "|".join(WRITE_TOOLS)),
    ("afterFileEdit", None),
    ("stop", None),
)
MISSED = (
    "Cursor takes no context at a prompt: the agent is told the developer's decisions at a session's start, and a "
    "rejected change it tries again is denied with the developer's words"
)


def hook_command(stet: list[str], keep: bool, request_changes: bool = False) -> str:
    return command_line(stet, AGENT, keep, request_changes)


def _stets(hook: object) -> bool:
    if not isinstance(hook, dict):
        return False
    return runs_stet_hook(hook.get("command"), AGENT)


def hooks_with(config: Any, command: str) -> tuple[JSON, list[str]]:
    """The hooks file with Stet's command on each event, and what changed."""
    if not isinstance(config, dict):
        raise InvalidParams(".cursor/hooks.json does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(config)
    out.setdefault("version", 1)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidParams('"hooks" in .cursor/hooks.json is not an object; fix it first')
    changed = []
    for event, matcher in EVENTS:
        want: JSON = {"command": command, **({"matcher": matcher} if matcher else {})}
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InvalidParams(f'"hooks.{event}" in .cursor/hooks.json is not a list; fix it first')
        if [e for e in entries if _stets(e)] == [want]:
            continue
        entries[:] = [e for e in entries if not _stets(e)] + [want]
        changed.append(f"hooks.{event}")
    return out, changed


def mcp_with(config: Any, stet: list[str]) -> tuple[JSON, list[str], str | None]:
    """`.cursor/mcp.json` with Stet's MCP server added when absent; (config, added, a warning)."""
    if not isinstance(config, dict):
        raise InvalidParams(".cursor/mcp.json does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(config)
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidParams('"mcpServers" in .cursor/mcp.json is not an object; fix it first')
    wanted = {"command": stet[0], "args": [*stet[1:], "mcp", "--agent", AGENT]}
    if SERVER in servers:
        return out, [], None if servers[SERVER] == wanted else f'.cursor/mcp.json already has "{SERVER}"; left as it is'
    servers[SERVER] = wanted
    return out, [f"mcpServers.{SERVER}"], None
