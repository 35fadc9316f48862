"""`stet integrate copilot`: GitHub Copilot CLI's hooks in `.github/hooks/stet.json` (its
format: `{"version": 1, "hooks": {EVENT: [{"type": "command", "bash", "timeoutSec"}]}}`), one
command per event naming the event (`stet hook copilot --event preToolUse`: Copilot's input does
not). Merged with what the file holds: Stet's own entries are replaced, every other kept.

What Copilot CLI's users miss (it reads no answer but preToolUse's): the open review told at
session start and each decision told at the next prompt; the agent learns a rejection from the
deny's reason when it tries the change again. Stet's MCP server is not written: Copilot CLI keeps
its MCP servers in the user's own configuration (`/mcp add`).
"""

from __future__ import annotations

import copy
from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from .claude_code import command_line

AGENT = "copilot"
EVENTS = ("preToolUse", "postToolUse", "agentStop")
TIMEOUT = 30  # seconds (Copilot CLI's default)
MISSED = (
    "Copilot CLI reads no hook answer but preToolUse's: the agent is not told the open review at session start "
    "nor the developer's decisions at each prompt (a rejected change is denied with the developer's words when it "
    "tries it again); add Stet's MCP server yourself if you want it (/mcp add: stet mcp --agent copilot)"
)


def hook_command(stet: list[str], keep: bool, event: str) -> str:
    return command_line(stet, AGENT, keep, False, "--event", event)


def _stets(hook: object) -> bool:
    if not isinstance(hook, dict):
        return False
    words = hook.get("bash")
    return isinstance(words, str) and f" hook {AGENT} " in f" {words.strip()} "


def hooks_with(config: Any, stet: list[str], keep: bool) -> tuple[JSON, list[str]]:
    """The hooks file with Stet's command on each event, and what changed."""
    if not isinstance(config, dict):
        raise InvalidParams(".github/hooks/stet.json does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(config)
    out.setdefault("version", 1)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidParams('"hooks" in .github/hooks/stet.json is not an object; fix it first')
    changed = []
    for event in EVENTS:
        want = {"type": "command", "bash": hook_command(stet, keep, event), "timeoutSec": TIMEOUT}
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InvalidParams(f'"hooks.{event}" in .github/hooks/stet.json is not a list; fix it first')
        if [e for e in entries if _stets(e)] == [want]:
            continue
        entries[:] = [e for e in entries if not _stets(e)] + [want]
        changed.append(f"hooks.{event}")
    return out, changed
