"""`stet integrate claude-code` (write Claude Code's project configuration) and `stet hook
claude-code` (the hook command it runs: one JSON object on stdin)."""

from __future__ import annotations

import json
import os

from ..errors import InvalidParams, TooLarge

DEFAULT_PORT = 8765

TYPE_CHECKING = False  # types for mypy only
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ..domain.shapes import JSON
    from .call import Call
    from .parser import Parents, Sub


def add_integrate(sub: Sub, o: Parents, name: str) -> None:
    from ..agents.codecs import NAMES

    p = sub.add_parser(
        name,
        parents=[o.common],
        help="set an agent up to work with Stet (claude-code, codex, gemini, copilot, cursor, qwen: hooks and the MCP server)",
        description="Write the project's Claude Code configuration, merging with what is there (Stet's own "
        "hooks from an earlier run are replaced, nothing else is removed or changed; every file is checked before "
        "any is written): in .claude/settings.json a PreToolUse hook on Edit|MultiEdit|Write that snapshots "
        "a file before the agent's first write (and denies an edit the developer rejected), a PostToolUse hook "
        "that records what the write left, a Stop hook that captures the turn's edits under the task "
        "claude-<session id>, and SessionStart and UserPromptSubmit hooks that tell the agent the developer's "
        "decisions; in .mcp.json Stet's MCP server (enabled in settings.json). For codex: the same hooks in "
        ".codex/hooks.json (PreToolUse and PostToolUse on apply_patch; the task codex-<session id>) and Stet's MCP "
        "server as [mcp_servers.stet] in .codex/config.toml; Codex runs them once you trust them (its /hooks view). "
        "For gemini: .gemini/settings.json (BeforeTool and AfterTool on replace|write_file, BeforeAgent, AfterAgent; "
        "the task gemini-<session id>; Stet's MCP server in mcpServers), run in a trusted folder only. For copilot: "
        ".github/hooks/stet.json (preToolUse, postToolUse, agentStop; the task copilot-<session id>). For cursor: "
        ".cursor/hooks.json (sessionStart, preToolUse, afterFileEdit, stop; the task cursor-<conversation id>) "
        "and Stet's MCP server in .cursor/mcp.json. For qwen: Claude Code's hooks in .qwen/settings.json (the task "
        "qwen-<session id>) and Stet's MCP server in its mcpServers.",
    )
    p.add_argument("agent", choices=list(NAMES), help="the agent")
    p.add_argument(
        "--stet",
        metavar="CMD",
        help="how Claude Code starts Stet: a program (a path, spaces and all, or a name on PATH) or a command line "
        '(e.g. /path/to/venv/bin/stet, or "/path/to/python -m stet"); it must exist. Default: `stet` when it is '
        "on PATH, else the Stet running now",
    )
    p.add_argument(
        "--restore",
        action="store_true",
        help="take the agent's edits out of the files at the end of each turn (default: leave them for review)",
    )
    p.add_argument(
        "--request-changes",
        action="store_true",
        help="at the end of a turn, when the developer rejected changes with feedback the agent was not told yet, "
        "ask it to go on with that feedback instead of stopping (once per stop; not for copilot)",
    )
    p.add_argument(
        "--http",
        nargs="?",
        const=DEFAULT_PORT,
        type=int,
        metavar="PORT",
        help=f"write HTTP hooks answered by a running `stet mcp --http PORT` (default {DEFAULT_PORT}) instead of "
        "command hooks (SessionStart, which Claude Code does not send over HTTP, stays a command hook); Claude Code "
        "sends the token from the environment variable STET_TOKEN",
    )


def add_hook(sub: Sub, o: Parents, name: str) -> None:
    from ..agents.codecs import NAMES

    p = sub.add_parser(
        name,
        parents=[o.common],
        help="the command an agent's hooks run (reads the hook's JSON on stdin)",
        description="Run by an agent's hooks (see `stet integrate AGENT`; Claude Code's events named here, Codex's "
        "are the same, Gemini CLI's BeforeAgent, BeforeTool, AfterTool and AfterAgent mean the same): SessionStart tells the session "
        "the open review, UserPromptSubmit the decisions made since it was last told, PreToolUse denies an edit the "
        "developer rejected (and records the file's baseline), PostToolUse records what the agent wrote, Stop "
        "captures the turn. Always exit 0 (a hook never blocks the agent by accident): the answer's JSON on stdout, "
        "or on an error one line on stderr.",
    )
    p.add_argument("agent", choices=list(NAMES), help="the agent")
    p.add_argument("--restore", action="store_true", help="at the end of a turn, take the edits out of the files")
    p.add_argument(
        "--request-changes",
        action="store_true",
        help="at the end of a turn, send the agent back to work with the developer's rejections not told yet",
    )
    p.add_argument(
        "--event",
        metavar="NAME",
        help="the hook's event, for an agent whose hook input does not name it (copilot: set by `stet integrate`)",
    )


def _load(path: str) -> JSON:
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data: JSON = json.load(f)  # an agent's settings: a JSON object, checked by who reads it
            return data
    except (OSError, ValueError) as exc:
        raise InvalidParams(f"{path} cannot be read as JSON ({exc}); fix it or move it aside, nothing was written")


def _save(path: str, data: JSON | str) -> None:
    from ..workspace.files import write_atomic

    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, data if isinstance(data, str) else json.dumps(data, indent=2, ensure_ascii=False) + "\n")


async def _set_up(
    args: argparse.Namespace,
    call: Call,
    root: str,
    files: Sequence[tuple[str, JSON | str, list[str]]],
    *,
    who: str,
    note: str | None,
    warning: str | None = None,
) -> None:
    """The one write phase of every `stet integrate`: `files` are (path, its new content, what
    changed in it). Every file that changes is checked before anything is made (the store
    included), then the store, then the files; then what changed is said, file by file."""
    from ..workspace import safe
    from .session import opened

    writes = [(path, data) for path, data, changed in files if changed]
    for path, _ in writes:
        why = safe.cannot_rewrite(path)
        if why is not None:
            raise InvalidParams(f"{why}; nothing was written")
    if note:
        call.say(f"stet: {note}")
    async with opened(args, call, create=True):
        pass  # the store exists from now on: the hooks find it
    for path, data in writes:
        _save(path, data)
    if warning:
        call.say(f"stet: {warning}")
    done = [f"{os.path.relpath(path, root)}: {a}" for path, _, changed in files for a in changed]
    call.out("\n".join(done) if done else f"{who} is already set up for Stet here")


async def cmd_integrate(args: argparse.Namespace, call: Call) -> int:
    """All or nothing: every file is read, merged and checked before the first one is written
    (the store included), so a refusal leaves the project as it was."""
    from ..agents.setups.claude_code import (
        TOKEN_ENV,
        hook_command,
        http_hook,
        mcp_with,
        settings_with,
        stet_command,
        wanted_hooks,
    )
    from .locate import locate

    if args.agent == "codex":
        return await _integrate_codex(args, call)
    if args.agent in ("gemini", "qwen"):
        return await _integrate_settings(args, call)
    if args.agent == "copilot":
        return await _integrate_copilot(args, call)
    if args.agent == "cursor":
        return await _integrate_cursor(args, call)
    stet, note = stet_command(args.stet)  # before anything is made: a program that is not there is refused
    _, roots = locate(args, True, call)
    root = roots[0]
    settings_path = os.path.join(root, ".claude", "settings.json")
    mcp_path = os.path.join(root, ".mcp.json")
    if args.http is not None and not 0 < args.http < 65536:
        raise InvalidParams(f"--http takes a port (1-65535), not {args.http}")
    http = (
        http_hook(args.http, keep=not args.restore, request_changes=args.request_changes)
        if args.http is not None
        else None
    )
    settings, changed = settings_with(
        _load(settings_path),
        wanted_hooks(hook_command(stet, keep=not args.restore, request_changes=args.request_changes), http),
    )
    mcp, mcp_added, warning = mcp_with(_load(mcp_path), stet)
    files = [(settings_path, settings, changed), (mcp_path, mcp, mcp_added)]
    await _set_up(args, call, root, files, who="Claude Code", note=note, warning=warning)
    if args.http is not None:
        call.say(
            f"stet: the hooks are answered by `stet mcp --http {args.http}` (keep it running; SessionStart, which "
            f"Claude Code does not send over HTTP, runs {hook_command(stet, keep=not args.restore, request_changes=args.request_changes)}); start Claude "
            f"Code with {TOKEN_ENV} set to the token: export {TOKEN_ENV}=$(stet mcp --print-token)"
        )
    return 0


async def _integrate_codex(args: argparse.Namespace, call: Call) -> int:
    """`.codex/hooks.json` and `.codex/config.toml`, all or nothing as for Claude Code."""
    from ..agents.setups import codex
    from ..agents.setups.claude_code import stet_command
    from .locate import locate

    if args.http is not None:
        raise InvalidParams("Codex runs command hooks only: --http is for Claude Code; nothing was written")
    stet, note = stet_command(args.stet, "Codex")
    _, roots = locate(args, True, call)
    root = roots[0]
    hooks_path = os.path.join(root, ".codex", "hooks.json")
    config_path = os.path.join(root, ".codex", "config.toml")
    hooks, changed = codex.hooks_with(
        _load(hooks_path), codex.hook_command(stet, keep=not args.restore, request_changes=args.request_changes)
    )
    text = _load_text(config_path)
    config, added, warning = codex.config_with(text, stet)
    files: list[tuple[str, JSON | str, list[str]]] = [(hooks_path, hooks, changed), (config_path, config, added)]
    await _set_up(args, call, root, files, who="Codex", note=note, warning=warning)
    call.say(f"stet: {codex.TRUST}")
    return 0


async def _integrate_settings(args: argparse.Namespace, call: Call) -> int:
    """`.gemini/settings.json` or `.qwen/settings.json`, checked before it is written, as for Claude Code."""
    from ..agents.setups import gemini, qwen
    from ..agents.setups.claude_code import stet_command
    from .locate import locate

    setup, who, folder = (gemini, "Gemini CLI", ".gemini") if args.agent == "gemini" else (qwen, "Qwen Code", ".qwen")
    if args.http is not None:
        raise InvalidParams(f"Stet answers {who}'s command hooks only: --http is for Claude Code; nothing was written")
    stet, note = stet_command(args.stet, who)
    _, roots = locate(args, True, call)
    root = roots[0]
    path = os.path.join(root, folder, "settings.json")
    settings, changed, warning = setup.settings_with_stet(
        _load(path), setup.hook_command(stet, keep=not args.restore, request_changes=args.request_changes), stet
    )
    await _set_up(args, call, root, [(path, settings, changed)], who=who, note=note, warning=warning)
    if setup is gemini:
        call.say(f"stet: {gemini.TRUST}")
    return 0


async def _integrate_copilot(args: argparse.Namespace, call: Call) -> int:
    """`.github/hooks/stet.json`, checked before it is written, as for Claude Code."""
    from ..agents.setups import copilot
    from ..agents.setups.claude_code import stet_command
    from .locate import locate

    if args.http is not None:
        raise InvalidParams(
            "Stet answers Copilot CLI's command hooks only: --http is for Claude Code; nothing was written"
        )
    if args.request_changes:
        raise InvalidParams("--request-changes: Stet does not send Copilot CLI back to work yet; nothing was written")
    stet, note = stet_command(args.stet, "Copilot CLI")
    _, roots = locate(args, True, call)
    root = roots[0]
    path = os.path.join(root, ".github", "hooks", "stet.json")
    config, changed = copilot.hooks_with(_load(path), stet, keep=not args.restore)
    await _set_up(args, call, root, [(path, config, changed)], who="Copilot CLI", note=note)
    call.say(f"stet: {copilot.MISSED}")
    return 0


async def _integrate_cursor(args: argparse.Namespace, call: Call) -> int:
    """`.cursor/hooks.json` and `.cursor/mcp.json`, all or nothing as for Claude Code."""
    from ..agents.setups import cursor
    from ..agents.setups.claude_code import stet_command
    from .locate import locate

    if args.http is not None:
        raise InvalidParams("Stet answers Cursor's command hooks only: --http is for Claude Code; nothing was written")
    stet, note = stet_command(args.stet, "Cursor")
    _, roots = locate(args, True, call)
    root = roots[0]
    hooks_path = os.path.join(root, ".cursor", "hooks.json")
    mcp_path = os.path.join(root, ".cursor", "mcp.json")
    hooks, changed = cursor.hooks_with(
        _load(hooks_path), cursor.hook_command(stet, keep=not args.restore, request_changes=args.request_changes)
    )
    mcp, added, warning = cursor.mcp_with(_load(mcp_path), stet)
    files = [(hooks_path, hooks, changed), (mcp_path, mcp, added)]
    await _set_up(args, call, root, files, who="Cursor", note=note, warning=warning)
    call.say(f"stet: {cursor.MISSED}")
    return 0


def _load_text(path: str) -> str:
    if not os.path.exists(path):
        return ""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParams(f"{path} cannot be read ({exc}); fix it or move it aside, nothing was written")


async def cmd_hook(args: argparse.Namespace, call: Call) -> int:
    """Always exit 0: exit 2 blocks the agent's tool call, and a hook must never block it by
    accident. A failure is one line on stderr; the agent goes on."""
    undo: list[tuple[str, str | None]] = []
    try:
        call, out = await _hook(args, call, undo)
    except Exception as exc:  # any failure: said, never blocking
        name = getattr(exc, "name", type(exc).__name__)
        message = " ".join(str(getattr(exc, "message", exc)).split())
        from ..domain.inert import inert  # the message may quote the hook's input

        call.say(f"stet hook: {name}: {inert(message)}"[:1000])
        return 0
    if out:
        try:
            if call.stdout is None:  # closed by the shell: nothing can be delivered
                raise OSError("its standard output is closed")
            call.stdout.write(json.dumps(out) + "\n")
            call.stdout.flush()
        except OSError as exc:  # never delivered: what it told is told again at the next prompt
            _drop(call)
            await _untell(args, call, undo)
            call.say(f"stet hook: the answer could not be written ({exc})")
    return 0


def _drop(call: Call) -> None:
    """The answer cannot be written: the rest of it goes nowhere (nothing more to flush at exit)."""
    import sys

    if call.stdout is sys.stdout:
        sys.stdout = open(os.devnull, "w")
    call.stdout = None


async def _untell(args: argparse.Namespace, call: Call, undo: list[tuple[str, str | None]]) -> None:
    from ..agents.hooks import loop
    from .session import opened

    if undo:
        try:
            async with opened(args, call) as review:
                await loop(review, args.agent).untell(undo)
        except Exception as exc:  # said; the notice is lost, never told twice
            call.say(f"stet hook: {type(exc).__name__}: {exc}"[:1000])


async def _hook(args: argparse.Namespace, call: Call, undo: list[tuple[str, str | None]]) -> tuple[Call, JSON]:
    """The hook's call (in the session's folder) and its answer."""
    from .. import limits
    from ..agents.hooks import handle
    from . import inputs
    from .session import opened

    try:
        raw = inputs.take(call, "-", limits.HOOK)
    except inputs.Oversize:
        raise TooLarge(f"the hook input is larger than {limits.HOOK >> 20} MiB") from None
    except inputs.Unreadable as exc:
        raise InvalidParams(f"cannot read the hook input: {exc}") from None
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidParams(f"the hook input is not JSON ({exc})") from None
    if args.event is not None and isinstance(payload, dict):
        payload["hookEventName"] = args.event  # the event the configuration ran this command for
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    roots = payload.get("workspace_roots") if isinstance(payload, dict) and cwd is None else None
    if isinstance(roots, list) and roots:  # Cursor names its workspace's folders, not a cwd
        cwd = roots[0]
    if isinstance(cwd, str) and os.path.isdir(call.path(cwd)):
        call = call.at(call.path(cwd))  # the store is found from the session's folder, as the agent sees it
    async with opened(args, call) as review:
        return call, await handle(
            review,
            args.agent,
            payload,
            keep=not args.restore,
            undo=undo,
            env=call.env,
            request_changes=args.request_changes,
        )
