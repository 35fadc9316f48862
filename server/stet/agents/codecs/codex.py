"""Codex CLI's hooks, as the agent's loop (agents/turn.py) hears them and as Codex reads the
answers.

Every input has `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `model` and
`permission_mode`. Its events by meaning: SessionStart (start), UserPromptSubmit (prompt),
PreToolUse with `tool_name: "apply_patch"` (before an edit: `tool_input.command` holds Codex's
own patch, its paths relative to `cwd`; domain/apply_patch.py reads it), PostToolUse (after: its
`tool_response` is a plain string, no report of the file before), Stop (end of turn).
A model Codex offers no `apply_patch` tool runs the patch through its shell instead
(`exec_command` with `apply_patch <<'EOF' … EOF`): Codex applies it itself and gives PreToolUse
a `tool_name: "Bash"` call whose `tool_input.command` is that heredoc (and no PostToolUse), so
a Bash command that starts with `apply_patch <<` is read as the same patch; any other command is
not Stet's (nothing said). A `workdir` the model gives exec_command does not reach the hook: the
patch's paths are taken relative to `cwd`.
Answers: `hookSpecificOutput.additionalContext` (a developer message to the model); a deny is
`hookSpecificOutput.permissionDecision: "deny"` with the reason, and to allow Codex is told
nothing (it refuses `"allow"`, and has no `"ask"`: a change Stet cannot check is let through
with a note); `systemMessage` shows the person a note.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ...domain import apply_patch
from ...domain.shapes import JSON
from ..turn import Agent, Answer, Change, Event, Meaning, ResultTooLarge
from .claude_code import heading

AGENT = Agent("codex", "codex-", "Codex")
TOOL = "apply_patch"
SHELL = "Bash"  # Codex's name, to its hooks, of a command run through exec_command
MEANINGS = {
    "SessionStart": Meaning.START,
    "UserPromptSubmit": Meaning.PROMPT,
    "PreToolUse": Meaning.BEFORE,
    "PostToolUse": Meaning.AFTER,
    "Stop": Meaning.END,
}


def decode(payload: Any, env: Mapping[str, str] | None = None) -> Event | None:
    """The event Codex's hook input means (None: one Stet does nothing for: another tool, a
    patch Codex itself will refuse)."""
    head = heading(payload, MEANINGS)
    if head is None:
        return None
    payload, name, session, meaning = head
    if meaning in (Meaning.BEFORE, Meaning.AFTER):
        changes = changes_of(payload)
        return Event(meaning, name, session, changes=changes) if changes else None
    return Event(meaning, name, session, continuing=payload.get("stop_hook_active") is True)


def changes_of(payload: JSON) -> tuple[Change, ...]:
    """The files an apply_patch call changes, each with the text it leaves."""
    tool_input = payload.get("tool_input")
    patch = tool_input.get("command") if isinstance(tool_input, dict) else None
    cwd = payload.get("cwd")
    tool = payload.get("tool_name")
    if tool not in (TOOL, SHELL) or not isinstance(patch, str) or not isinstance(cwd, str):
        return ()
    if tool == SHELL and not through_shell(patch):
        return ()  # another command: not an edit Stet reads
    try:
        files = apply_patch.parse(patch)
    except apply_patch.PatchError:
        return ()  # Codex refuses it too: nothing will be written
    out: list[Change] = []
    for f in files:
        path = os.path.normpath(os.path.join(cwd, f.path))
        if f.kind == "add":
            out.append(Change(path, TOOL, _whole(f.content)))
        elif f.kind == "delete":
            out.append(Change(path, TOOL, _whole("")))
        elif f.move_to is None:
            out.append(Change(path, TOOL, _updated(f.chunks, f.path)))
        else:
            target = os.path.normpath(os.path.join(cwd, f.move_to))
            out.append(Change(path, TOOL, _whole("")))
            out.append(Change(target, TOOL, _updated(f.chunks, f.path), source=path))
    return tuple(out)


def through_shell(command: str) -> bool:
    """Whether a shell command is Codex's patch given to `apply_patch` by a heredoc, as Codex
    itself recognises it: its first line `apply_patch <<'EOF'` (or `applypatch`, any quoting)."""
    first = command.lstrip().split("\n", 1)[0].strip()
    program, _, rest = first.partition(" ")
    return program in ("apply_patch", "applypatch") and rest.lstrip().startswith("<<")


def _whole(text: str) -> Callable[[str, int], str | None]:
    def after(_before: str, limit: int) -> str | None:
        if len(text) > limit:
            raise ResultTooLarge(len(text))
        return text

    return after


def _updated(chunks: tuple[apply_patch.Chunk, ...], path: str) -> Callable[[str, int], str | None]:
    def after(before: str, limit: int) -> str | None:
        made = _made(before, chunks, path)
        if made is not None and len(made) > limit:
            raise ResultTooLarge(len(made))
        return made

    return after


def _made(before: str, chunks: tuple[apply_patch.Chunk, ...], path: str) -> str | None:
    try:
        return apply_patch.apply(before, chunks, path) if chunks else before
    except apply_patch.PatchError:
        return None  # Codex will fail this patch itself


def encode(event: Event, answer: Answer) -> JSON:
    """The answer as Codex reads it ({}: nothing printed, which allows the call)."""
    if answer.deny is not None:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": answer.deny,
            }
        }
    out: JSON = {}
    if answer.block is not None:  # Stop: the turn goes on, the reason as the user's message
        out.update({"decision": "block", "reason": answer.block})
    notice = answer.notice or answer.ask
    if notice:
        out["systemMessage"] = notice
    if answer.context is not None:
        out["hookSpecificOutput"] = {"hookEventName": event.name, "additionalContext": answer.context}
    return out
