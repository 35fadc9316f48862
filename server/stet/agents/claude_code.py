"""Claude Code: its hooks feed Stet, and `stet integrate claude-code` writes its configuration.

Claude Code runs a hook command with one JSON object on stdin (`session_id`, `cwd`,
`hook_event_name`, and for tool events `tool_name` and `tool_input`, whose `file_path`
names the file an Edit, MultiEdit or Write changes). Stet's one hook command handles:

- PreToolUse on Edit|MultiEdit|Write: snapshot the file before the agent's first write to it
  in this turn (a file already recorded keeps its first content);
- PostToolUse on the same tools: remember what the write left, so a change made after it (the
  developer's) is told apart from the agent's;
- Stop (the end of a turn): capture what the agent touched in the turn, under a task named
  after the session. By default the agent's version stays in the files for review (`kept`
  hunks: reject puts the baseline back), as the agent expects to find its own edits next turn.
"""

from __future__ import annotations

import copy
import re
import shlex
from typing import Any

from ..errors import InvalidParams, OutsideWorkspace
from ..review import Review
from ..store import tasks as task_sql
from .capture import Capture
from .snapshots import Snapshots
from .tasks import Tasks

WRITE_TOOLS = ("Edit", "MultiEdit", "Write")
MATCHER = "|".join(WRITE_TOOLS)
SERVER = "stet"


def task_for(session_id: str) -> str:
    """The task a session's work goes under: `claude-<session id>`."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", session_id)[:200]
    return f"claude-{safe}"


def _payload_text(payload: dict, key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidParams(f"the hook input has no {key}")
    return value


def file_of(payload: dict) -> str | None:
    """The file a write tool call names (None: another tool, or no file)."""
    if payload.get("tool_name") not in WRITE_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    return path if isinstance(path, str) and path else None


async def handle(review: Review, payload: Any, *, keep: bool = True) -> dict:
    """Do what one hook event asks; returns the JSON to print for Claude Code ({}: nothing)."""
    if not isinstance(payload, dict):
        raise InvalidParams("the hook input is not a JSON object")
    event = _payload_text(payload, "hook_event_name")
    session = _payload_text(payload, "session_id")
    task = task_for(session)
    snapshots = Snapshots(review)
    if event in ("PreToolUse", "PostToolUse"):
        path = file_of(payload)
        if path is None:
            return {}
        try:
            snapshots.rel(path)
        except OutsideWorkspace:
            return {}  # not a file of this workspace (or Stet's and git's own): not reviewed here
        if event == "PreToolUse":
            if not await _task_exists(review, task):  # the first write of the session starts it
                await Tasks(review).start(f"Claude Code session {session[:8]}", agent="claude-code", task_id=task)
            await snapshots.take(task, [path])
        else:
            await snapshots.agent_wrote(task, path)
        return {}
    if event == "Stop":
        if await snapshots.current(task) is None:
            return {}  # the agent wrote nothing in this turn
        answer = await Capture(review).run(
            task_id=task, keep=keep, agent="claude-code", message=f"Claude Code session {session[:8]}"
        )
        return {"systemMessage": stop_message(answer, task)} if answer.get("proposalId") or answer["refused"] else {}
    return {}


async def _task_exists(review: Review, task_id: str) -> bool:
    async with review.require_store().read() as tx:
        return await task_sql.task(tx, task_id) is not None


def stop_message(answer: dict, task: str) -> str:
    parts = []
    if answer.get("proposalId"):
        n = len(answer["hunks"])
        where = "left in the files" if answer.get("keep") else "taken out of the files"
        parts.append(f"Stet: {n} hunk(s) of this turn are waiting for review ({where}; task {task})")
    for r in answer.get("refused", ()):
        parts.append(f"Stet: {r['path']} not captured: {r['why']}")
    return "\n".join(parts)


# --- configuration -------------------------------------------------------------------------
def hook_command(stet: str, keep: bool) -> str:
    return f"{stet} hook claude-code" + ("" if keep else " --restore")


def _entry(command: str, matcher: str | None) -> dict:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        entry = {"matcher": matcher, **entry}
    return entry


def settings_with(settings: Any, command: str) -> tuple[dict, list[str]]:
    """Claude Code's settings with Stet's hooks added (nothing removed, nothing changed that is
    there already), and what was added. Refuses settings it cannot merge into safely."""
    if not isinstance(settings, dict):
        raise InvalidParams("the settings file does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidParams('"hooks" in the settings is not an object; fix it first')
    added = []
    for event, matcher in (("PreToolUse", MATCHER), ("PostToolUse", MATCHER), ("Stop", None)):
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InvalidParams(f'"hooks.{event}" in the settings is not a list; fix it first')
        present = any(
            isinstance(e, dict)
            and isinstance(e.get("hooks"), list)
            and any(isinstance(h, dict) and h.get("command") == command for h in e["hooks"])
            for e in entries
        )
        if not present:
            entries.append(_entry(command, matcher))
            added.append(f"hooks.{event}")
    servers = out.setdefault("enabledMcpjsonServers", [])
    if isinstance(servers, list) and SERVER not in servers:
        servers.append(SERVER)
        added.append("enabledMcpjsonServers")
    return out, added


def mcp_with(config: Any, stet: str) -> tuple[dict, list[str], str | None]:
    """`.mcp.json` with Stet's MCP server added; (config, what was added, a warning)."""
    if not isinstance(config, dict):
        raise InvalidParams(".mcp.json does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(config)
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidParams('"mcpServers" in .mcp.json is not an object; fix it first')
    words = shlex.split(stet)
    wanted = {"command": words[0], "args": [*words[1:], "mcp", "--agent", "claude-code"]}
    if SERVER in servers:
        if servers[SERVER] != wanted:
            return out, [], f'.mcp.json already has a server named "{SERVER}"; left as it is'
        return out, [], None
    servers[SERVER] = wanted
    return out, [f"mcpServers.{SERVER}"], None
