"""`stet integrate claude-code`: Claude Code's project configuration (its hooks in
.claude/settings.json, Stet's MCP server in .mcp.json), merged with what is there.

Claude Code runs a `command` hook as a shell command (`/bin/sh -c`): the words that start
Stet are quoted for that shell. `.mcp.json` names a program and its arguments, run without a
shell: they go there as they are. Its hooks' input is read by agents/codecs/claude_code.py.
"""

from __future__ import annotations

import copy
import os
import shlex
import shutil
import sys
from typing import Any

from ...domain.shapes import JSON
from ...errors import InvalidParams
from ..codecs.claude_code import WRITE_TOOLS

MATCHER = "|".join(WRITE_TOOLS)
SERVER = "stet"
AGENT = "claude-code"


# --- configuration -------------------------------------------------------------------------
def stet_command(given: str | None, who: str = "Claude Code") -> tuple[list[str], str | None]:
    """The words that start Stet for Claude Code (or `who`), and a note for the user (None: nothing to say).

    `given` (--stet) is a program - a path, spaces and all, or a name on PATH - or a command
    line split like a shell splits it (`python -m stet`); its program must exist and be
    executable (relative paths are made absolute: hooks run from the session's folder).
    Without it: `stet` when it is on PATH, else the Stet running now. Raises InvalidParams."""
    if given is None:
        if shutil.which("stet"):
            return ["stet"], None
        me = os.path.abspath(sys.argv[0])
        words = [me] if os.path.basename(me) == "stet" and _program(me) else [sys.executable, "-m", "stet"]
        return words, f"`stet` is not on PATH here: {who} will run {shlex.join(words)} (--stet chooses another)"
    text = given.strip()
    whole = _program(text) if text else None
    if whole is not None:
        return [whole], None
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise InvalidParams(f"--stet {given!r} cannot be split into words: {exc}") from None
    found = _program(words[0]) if words else None
    if found is None:
        if not words or words[0] == text:
            what = f"{text!r} is no program here"
        else:
            what = f"neither {text!r} nor {words[0]!r} is a program here"
        raise InvalidParams(
            f"--stet {given!r}: {what} (an executable file, or a name on PATH). Give the path of Stet's `stet` "
            '(e.g. /path/to/venv/bin/stet), or a command line such as "/path/to/python -m stet"; nothing was written'
        )
    return [found, *words[1:]], None


def _program(word: str) -> str | None:
    """`word` as a shell finds a program: a path (made absolute) to an executable file, or a
    name on PATH (kept as a name); None when there is no such program."""
    if "/" not in word:
        return word if shutil.which(word) else None
    path = os.path.abspath(os.path.expanduser(word))
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def command_line(stet: list[str], agent: str, keep: bool, request_changes: bool = False, *extra: str) -> str:
    """`stet hook AGENT` as a shell command line, each word quoted for `/bin/sh`."""
    options = [*extra, *([] if keep else ["--restore"]), *(["--request-changes"] if request_changes else [])]
    return shlex.join([*stet, "hook", agent, *options])


OPTIONS = ("--restore", "--request-changes")  # what may follow `hook AGENT` in a command of Stet's


def hook_command(stet: list[str], keep: bool, request_changes: bool = False) -> str:
    """The hooks' command: a shell command line, each word quoted for `/bin/sh`."""
    return command_line(stet, AGENT, keep, request_changes)


def runs_stet_hook(command: object, agent: str) -> bool:
    """Whether a hook's command line is Stet's for `agent`: it ends in `hook AGENT` and the
    options Stet writes."""
    if not isinstance(command, str):
        return False
    words = command.split()
    while words and words[-1] in OPTIONS:
        words.pop()
    return words[-2:] == ["hook", agent]


HOOK_PATH = "/hooks/claude-code"  # the route of `stet mcp --http` that answers Claude Code's HTTP hooks
TOKEN_ENV = "STET_TOKEN"
HTTP_TIMEOUT = 10  # seconds Claude Code waits for an HTTP hook's answer (then goes on without it)
# The events Stet's hooks handle, and the matcher of each (None: every occurrence).
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PreToolUse", MATCHER),
    ("PostToolUse", MATCHER),
    ("Stop", None),
)


# Claude Code sends these events to an `http` hook. SessionStart it does not ("HTTP hooks are not
# supported for SessionStart", seen with Claude Code 2.1.332): that one stays a command hook.
HTTP_EVENTS = frozenset({"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"})


def command_hook(command: str) -> JSON:
    return {"type": "command", "command": command}


def http_hook(port: int, keep: bool, request_changes: bool = False) -> JSON:
    """Claude Code's `http` hook pointing at `stet mcp --http PORT` on this machine; the token
    goes through the environment variable STET_TOKEN (allowedEnvVars), never into the file."""
    return {
        "type": "http",
        "url": f"http://127.0.0.1:{port}{HOOK_PATH}" + _query(keep, request_changes),
        "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
        "allowedEnvVars": [TOKEN_ENV],
        "timeout": HTTP_TIMEOUT,
    }


def _query(keep: bool, request_changes: bool) -> str:
    words = [*([] if keep else ["restore=1"]), *(["request_changes=1"] if request_changes else [])]
    return "?" + "&".join(words) if words else ""


def wanted_hooks(command: str, http: JSON | None = None) -> dict[str, JSON]:
    """Stet's hook for each event: the command hook running `command`, or with `http` that hook
    for every event Claude Code sends over HTTP (SessionStart keeps the command)."""
    return {event: http if http is not None and event in HTTP_EVENTS else command_hook(command) for event, _ in EVENTS}


def _kind(hook: JSON) -> str:
    return "http" if hook.get("type") == "http" else "command"


def is_stets(hook: object, agent: str = AGENT) -> bool:
    """A hook `stet integrate AGENT` wrote: an http hook to Stet's route (any port, with
    or without ?restore=1), or a command ending in `hook AGENT` (or `... --restore`)."""
    if not isinstance(hook, dict):
        return False
    if hook.get("type", "command") == "http":
        url = hook.get("url")
        return isinstance(url, str) and url.split("?")[0].endswith(HOOK_PATH)
    return runs_stet_hook(hook.get("command"), agent)


def _same(a: object, hook: JSON) -> bool:
    if not isinstance(a, dict):
        return False
    key = "url" if hook["type"] == "http" else "command"
    return bool(a.get("type", "command") == hook["type"] and a.get(key) == hook[key])


def settings_with(
    settings: Any,
    wanted: dict[str, JSON],
    *,
    agent: str = AGENT,
    events: tuple[tuple[str, str | None], ...] | None = None,
    enable_mcp: bool = True,
) -> tuple[JSON, list[str]]:
    """An agent's hooks settings (Claude Code's by default; `events` and their matchers, EVENTS
    when None; Codex's hooks.json has the same shape) with Stet's hook of each event as `wanted`
    (wanted_hooks) says, and what changed. A hook of Stet's that is not the wanted one (the other kind, another port,
    another command) is replaced in its place, a second copy removed; every other hook, entry
    and setting stays exactly as it is. Refuses settings it cannot merge into safely."""
    if not isinstance(settings, dict):
        raise InvalidParams("the settings file does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidParams('"hooks" in the settings is not an object; fix it first')
    changed = []

    def ours(hook: object) -> bool:
        return is_stets(hook, agent)

    for event, matcher in EVENTS if events is None else events:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InvalidParams(f'"hooks.{event}" in the settings is not a list; fix it first')
        want = wanted[event]
        placed = any(
            _same(h, want)
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("hooks"), list)
            for h in e["hooks"]
        )
        kept, gone, emptied = False, [], []
        for e in entries:
            if not isinstance(e, dict) or not isinstance(e.get("hooks"), list) or not any(map(ours, e["hooks"])):
                continue
            mine = []
            for h in e["hooks"]:
                if not ours(h) or (_same(h, want) and not kept):
                    kept = kept or ours(h)
                    mine.append(h)
                    continue
                gone.append(_kind(h))
                if not placed:  # the wanted hook takes the place of the first other one of Stet's
                    mine.append(dict(want))
                    placed = kept = True
            e["hooks"] = mine
            if not mine:
                emptied.append(e)  # it held nothing but Stet's hooks, all gone now: it goes too
        entries[:] = [e for e in entries if not any(e is x for x in emptied)]
        if gone:
            changed.append(
                f"hooks.{event} (Stet's {_kind(want)} hook in place of its {' and '.join(sorted(set(gone)))} hook)"
            )
        if matcher is not None and _rematched(entries, want, matcher):
            changed.append(f"hooks.{event} (Stet's hook on {matcher})")
        if not placed:
            entry: dict[str, Any] = {"hooks": [dict(want)]}
            entries.append({"matcher": matcher, **entry} if matcher is not None else entry)
            changed.append(f"hooks.{event}")
    servers = out.setdefault("enabledMcpjsonServers", []) if enable_mcp else None
    if isinstance(servers, list) and SERVER not in servers:
        servers.append(SERVER)
        changed.append("enabledMcpjsonServers")
    return out, changed


def _rematched(entries: list[Any], want: JSON, matcher: str) -> bool:
    """Stet's hook put under `matcher` where an earlier `integrate` wrote another (NotebookEdit
    came later): an entry holding Stet's hook alone takes the matcher; from an entry shared with
    the developer's hooks, whose matcher is theirs, Stet's hook moves to an entry of its own."""
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("hooks"), list) or e.get("matcher") == matcher:
            continue
        ours = [h for h in e["hooks"] if _same(h, want)]
        if not ours:
            continue
        if len(ours) == len(e["hooks"]):
            e["matcher"] = matcher
        else:
            e["hooks"] = [h for h in e["hooks"] if not _same(h, want)]
            entries.append({"matcher": matcher, "hooks": ours})
        return True
    return False


def mcp_with(config: Any, stet: list[str]) -> tuple[JSON, list[str], str | None]:
    """`.mcp.json` with Stet's MCP server added; (config, what was added, a warning). Its
    `command` and `args` are run without a shell: the words go as they are."""
    if not isinstance(config, dict):
        raise InvalidParams(".mcp.json does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(config)
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidParams('"mcpServers" in .mcp.json is not an object; fix it first')
    wanted = {"command": stet[0], "args": [*stet[1:], "mcp", "--agent", AGENT]}
    if SERVER in servers:
        if servers[SERVER] != wanted:
            return out, [], f'.mcp.json already has a server named "{SERVER}"; left as it is'
        return out, [], None
    servers[SERVER] = wanted
    return out, [f"mcpServers.{SERVER}"], None


def settings_and_mcp_with(
    settings: Any, command: str, stet: list[str], *, agent: str, events: tuple[tuple[str, str | None], ...], where: str
) -> tuple[JSON, list[str], str | None]:
    """A settings file in Claude Code's shape that also holds `mcpServers` (Gemini CLI's, Qwen
    Code's): Stet's hooks for `events` and its MCP server (added when absent, never changed);
    (settings, what changed, a warning). `where` names the file in what is said."""
    out, changed = settings_with(
        settings, {e: command_hook(command) for e, _ in events}, agent=agent, events=events, enable_mcp=False
    )
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidParams(f'"mcpServers" in {where} is not an object; fix it first')
    wanted = {"command": stet[0], "args": [*stet[1:], "mcp", "--agent", agent]}
    if SERVER not in servers:
        servers[SERVER] = wanted
        return out, [*changed, f"mcpServers.{SERVER}"], None
    if servers[SERVER] != wanted:
        return out, changed, f'{where} already has an MCP server named "{SERVER}"; left as it is'
    return out, changed, None
