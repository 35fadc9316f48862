"""`stet integrate codex`: Codex CLI's project configuration, merged with what is there.

- `.codex/hooks.json` (the same shape as Claude Code's hooks: `{"hooks": {EVENT: [{"matcher",
  "hooks": [{"type": "command", "command"}]}]}}`): SessionStart, UserPromptSubmit, PreToolUse and
  PostToolUse on `apply_patch` (PreToolUse on `Bash` too: a patch run through Codex's shell), Stop,
  each running `stet hook codex`; Codex runs a command hook
  with the shell, so the words are quoted for it.
- `.codex/config.toml`: Stet's MCP server as `[mcp_servers.stet]` (`command`, `args`). The file is
  read with tomllib; the table is appended as text only when absent, and the result is read back
  before anything is written: a file that cannot be parsed, or where the table cannot be added
  as text (an inline `mcp_servers = {...}`), is refused with why, never rewritten.

Codex skips a project's hooks until the user trusts them (its `/hooks` view), and loads a
project's `.codex/config.toml` only in a trusted project: `stet integrate codex` says so.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from .claude_code import SERVER, command_hook, command_line, settings_with

AGENT = "codex"
MATCHER = "apply_patch"
# Before an edit, Codex's shell too: a model offered no apply_patch tool runs `apply_patch <<'EOF'`
# through exec_command, which Codex's hooks see as a Bash call (and no PostToolUse follows it).
BEFORE_MATCHER = "apply_patch|Bash"
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PreToolUse", BEFORE_MATCHER),
    ("PostToolUse", MATCHER),
    ("Stop", None),
)
TRUST = (
    "Codex skips a project's hooks until you trust them: start Codex here and review Stet's hooks in its /hooks "
    "view (and trust this folder, or Codex ignores .codex/config.toml's MCP server too)"
)


def hook_command(stet: list[str], keep: bool, request_changes: bool = False) -> str:
    return command_line(stet, AGENT, keep, request_changes)


def hooks_with(config: Any, command: str) -> tuple[JSON, list[str]]:
    """`.codex/hooks.json` with Stet's command hook on each event, and what changed."""
    wanted = {event: command_hook(command) for event, _ in EVENTS}
    return settings_with(config, wanted, agent=AGENT, events=EVENTS, enable_mcp=False)


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (no surrogates: non-ASCII goes as it is)."""
    return json.dumps(text, ensure_ascii=False)


def config_with(text: str, stet: list[str]) -> tuple[str, list[str], str | None]:
    """`.codex/config.toml`'s text with `[mcp_servers.stet]` appended when absent; (text, what was
    added, a warning). Raises InvalidParams for a file it cannot read or add to safely."""
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidParams(f".codex/config.toml is not valid TOML ({exc}); fix it first, nothing was written")
    wanted = {"command": stet[0], "args": [*stet[1:], "mcp", "--agent", AGENT]}
    servers = config.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise InvalidParams('"mcp_servers" in .codex/config.toml is not a table; fix it first, nothing was written')
    if servers is not None and SERVER in servers:
        if {k: servers[SERVER].get(k) for k in wanted} != wanted:
            return text, [], f'.codex/config.toml already has an MCP server named "{SERVER}"; left as it is'
        return text, [], None
    args = ", ".join(_toml_string(a) for a in wanted["args"])
    table = f"[mcp_servers.{SERVER}]\ncommand = {_toml_string(stet[0])}\nargs = [{args}]\n"
    out = text + ("" if not text or text.endswith("\n") else "\n") + ("\n" if text.strip() else "") + table
    try:
        back = tomllib.loads(out)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidParams(
            f"Stet's [mcp_servers.{SERVER}] cannot be added to .codex/config.toml as it is written ({exc}); "
            "add it yourself, nothing was written"
        )
    if back.get("mcp_servers", {}).get(SERVER) != wanted:
        raise InvalidParams(
            f"Stet's [mcp_servers.{SERVER}] cannot be added to .codex/config.toml as it is written; add it yourself, "
            "nothing was written"
        )
    return out, [f"mcp_servers.{SERVER}"], None
