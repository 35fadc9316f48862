"""Claude Code: its hooks feed Stet, and `stet integrate claude-code` writes its configuration.

Claude Code runs a hook command with one JSON object on stdin (`session_id`, `cwd`,
`hook_event_name`, and for tool events `tool_name` and `tool_input`, whose `file_path`
names the file an Edit, MultiEdit or Write changes, `notebook_path` the notebook a NotebookEdit
changes). Stet's one hook command handles:

- SessionStart: tell the session the open review of Claude Code's tasks and the decisions
  not told yet (agents/loop.py);
- UserPromptSubmit: tell it the decisions made since it was last told, each once;
- PreToolUse on Edit|MultiEdit|Write|NotebookEdit: deny an edit that would make again a change the
  developer rejected, with their feedback as the reason;
- PreToolUse on Edit|MultiEdit|Write|NotebookEdit: snapshot the file before the agent's first write to it
  in this turn (a file already recorded keeps its first content);
- PostToolUse on the same tools: remember what the write left, so a change made after it (the
  developer's) is told apart from the agent's;
- Stop (the end of a turn): capture what the agent touched in the turn, under a task named
  after the session. By default the agent's version stays in the files for review (`kept`
  hunks: reject puts the baseline back), as the agent expects to find its own edits next turn.
  The hunks' message is `claude-code: <the turn's prompt>`, the prompt read from the end of
  the session's transcript when it can be, cheaply and safely.

Claude Code runs a `command` hook as a shell command (`/bin/sh -c`): the words that start
Stet are quoted for that shell. `.mcp.json` names a program and its arguments, run without a
shell: they go there as they are.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from typing import Any

from ..domain import headline
from ..domain.inert import inert
from ..domain.proposed import Captured
from ..domain.shapes import JSON
from ..domain.status import Status
from ..errors import InvalidParams, OutsideWorkspace, StetError
from ..review import Review
from ..review.task_records import TaskRecords
from ..workspace import safe
from .capture import Capture
from .loop import LIMIT, Loop, bounded
from .snapshots import Snapshots
from .tasks import Tasks

WRITE_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
MATCHER = "|".join(WRITE_TOOLS)
SERVER = "stet"
AGENT = "claude-code"
TRANSCRIPT_TAIL = 4 << 20  # bytes of a transcript read back from its end, at most


def task_for(session_id: str) -> str:
    """The task a session's work goes under: `claude-<session id>`."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", session_id)[:200]
    return f"claude-{safe}"


def _payload_text(payload: JSON, key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidParams(f"the hook input has no {key}")
    return value


def file_of(payload: JSON) -> str | None:
    """The file a write tool call names (None: another tool, or no file)."""
    tool = payload.get("tool_name")
    if tool not in WRITE_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    path = tool_input.get(key) if isinstance(tool_input, dict) else None
    return path if isinstance(path, str) and path else None


async def handle(
    review: Review,
    payload: Any,
    *,
    keep: bool = True,
    undo: list[Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> JSON:
    """Do what one hook event asks; returns the JSON to print for Claude Code ({}: nothing).
    `undo` receives what to give `Loop.untell` when the answer could not be delivered; `env` is
    the hook's caller's environment (None: this process's), which says where Claude Code keeps
    its transcripts."""
    if not isinstance(payload, dict):
        raise InvalidParams("the hook input is not a JSON object")
    event = _payload_text(payload, "hook_event_name")
    session = _payload_text(payload, "session_id")
    task = task_for(session)
    if event in ("PreToolUse", "PostToolUse"):
        return await _tool_event(review, payload, event, session, task)
    if event == "Stop":
        snapshots = Snapshots(review)
        if await snapshots.current(task) is None:
            return {}  # the agent wrote nothing in this turn
        message = headline.line(AGENT, turn_prompt(payload.get("transcript_path"), session, env))
        answer = await Capture(review).run(task_id=task, keep=keep, agent=AGENT, message=message, turn_of=session)
        return {"systemMessage": stop_message(answer, task)} if answer.proposal_id or answer.refused else {}
    if event in ("SessionStart", "UserPromptSubmit"):
        text, told = await (loop(review).session_context() if event == "SessionStart" else loop(review).news())
        if undo is not None:
            undo.extend(told)
        return _context(event, text)
    return {}


def loop(review: Review) -> Loop:
    """The loop of Claude Code's tasks: those it started (agent claude-code), and its hooks'."""
    return Loop(review, AGENT, task_prefix="claude-")


def _context(event: str, text: str | None) -> JSON:
    return {} if text is None else {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


async def _tool_event(review: Review, payload: JSON, event: str, session: str, task: str) -> JSON:
    path = file_of(payload)
    if path is None:
        return {}
    snapshots = Snapshots(review)
    try:
        rel = snapshots.rel(path)
    except OutsideWorkspace:
        return {}  # not a file of this workspace (or Stet's and git's own): not reviewed here
    if event == "PostToolUse":
        if await snapshots.agent_wrote(task, path):
            return {}
        return await _unseen(review, snapshots, payload, session, task, path, rel)
    denied = await _denied(review, payload, rel, snapshots.uri(rel))
    if denied is not None:
        return denied
    if not await _task_exists(review, task):  # the first write of the session starts it
        await Tasks(review).start(f"Claude Code session {session[:8]}", agent="claude-code", task_id=task)
    await snapshots.take(task, [path])
    return {}


async def _unseen(
    review: Review, snapshots: Snapshots, payload: JSON, session: str, task: str, path: str, rel: str
) -> JSON:
    """A write whose PreToolUse never ran (the hook failed, timed out, or was not configured):
    nobody recorded the file before it. Its content before is taken, in this order, from Claude
    Code's own report when that report and the call give exactly the file as it is now (a new
    file, or `originalFile` with the call's edit made), else from the last commit; the turn's
    capture then reviews it as usual. Said either way: this change was not guarded."""
    try:
        now = await review.bytes_now(snapshots.uri(rel), review.state.limits.max_bytes)
    except safe.TooLarge:
        return {}  # larger than Stet reviews: its PreToolUse kept no copy for that reason, and the turn's capture says so
    before, source = _reported_before(review, payload, now)
    if source is None:
        committed = await asyncio.to_thread(snapshots.committed, rel)
        before, source = (committed, "the last commit") if committed is not None else (None, None)
    shown = inert(rel)
    if source is None:
        text = (
            f"Stet did not see {shown} before this {payload.get('tool_name')} changed it (its PreToolUse hook did "
            "not run) and cannot tell what it held: the change is not captured for review and was not checked "
            "against the developer's rejections"
        )
    else:
        if not await _task_exists(review, task):
            await Tasks(review).start(f"Claude Code session {session[:8]}", agent="claude-code", task_id=task)
        await snapshots.take_as(task, rel, before)
        await snapshots.agent_wrote(task, path)
        text = (
            f"Stet did not see {shown} before this {payload.get('tool_name')} changed it (its PreToolUse hook did "
            f"not run): the change was not checked against the developer's rejections; it is captured for review "
            f"at the end of the turn against {source}"
        )
    return {
        "systemMessage": text[:LIMIT],
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text[:LIMIT]},
    }


def _reported_before(review: Review, payload: JSON, now: bytes | None) -> tuple[bytes | None, str | None]:
    """The file before the call, as Claude Code's PostToolUse reports it (`type: "create"`, or
    `originalFile`), when the call made from it gives exactly the file as it is now; (None,
    None) when it does not (the report is the agent's input: never taken on trust)."""
    response = payload.get("tool_response")
    if now is None or not isinstance(response, dict):
        return None, None
    try:
        text = now.decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if response.get("type") == "create" and tool == "Write":
        content = tool_input.get("content") if isinstance(tool_input, dict) else None
        return (None, "the file not existing before") if content == text else (None, None)
    original = response.get("originalFile")
    if not isinstance(original, str):
        return None, None
    try:
        made = edited(original, tool, tool_input, limit=review.state.limits.max_bytes)
    except ResultTooLarge:
        return None, None
    if made != text:
        return None, None
    return original.encode("utf-8"), "the file as Claude Code reported it before the call"


async def _denied(review: Review, payload: JSON, rel: str, uri: str) -> JSON | None:
    """The deny answer when the tool call would make again a change the developer rejected."""
    if not review.list(statuses=(Status.REJECTED,)):
        return None  # nothing was ever rejected: nothing to read
    try:
        raw = await review.bytes_now(uri, review.state.limits.max_bytes)
    except safe.TooLarge:
        return None  # larger than Stet reviews: its changes are not reviewed, so none is guarded
    try:
        before = "" if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    limit = review.state.limits.max_bytes
    try:
        after = edited(before, payload.get("tool_name"), payload.get("tool_input"), limit=limit)
    except ResultTooLarge as exc:
        return _too_large(review, rel, uri, exc.size, limit)
    if after is None:
        return None
    hunk = loop(review).rejected_redo(rel, uri, before, after)
    if hunk is None:
        return None
    feedback = " ".join((hunk.feedback or "").split()) or "(no reason given)"
    reason = f"The developer rejected this change to {rel}: {feedback}"
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason[:LIMIT],
        }
    }


class ResultTooLarge(Exception):
    """The text a tool call would make is longer than the limit: not built."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _too_large(review: Review, rel: str, uri: str, size: int, limit: int) -> JSON | None:
    """A call whose result is too large to check: nothing to say unless the developer rejected
    something in this file, then the developer is asked (never denied by a guess)."""
    rejected = review.list(uri=uri, statuses=(Status.REJECTED,)) or [
        h for h in review.list(statuses=(Status.REJECTED,)) if review.ws.rel(h.uri) == rel
    ]
    if not rejected:
        return None
    reason = (
        f"Stet cannot check this change to {rel} against the changes the developer rejected there: the file "
        f"would hold {size:,} characters (Stet checks and reviews at most {limit:,}); the developer decides"
    )
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": reason[:LIMIT],
        }
    }


def edited(before: str, tool: object, tool_input: object, limit: int | None = None) -> str | None:
    """The file's text once the tool call is made (Edit: old_string -> new_string, once or with
    replace_all everywhere; MultiEdit: its edits in order; Write: content); None when it cannot
    be told (the call will fail, or its input is not what Claude Code sends). Raises
    ResultTooLarge, before building it, for a text longer than `limit` characters (a
    replace_all of a short string by a long one multiplies the file)."""
    if not isinstance(tool_input, dict):
        return None
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else None
    if tool == "NotebookEdit":
        return notebook_edited(before, tool_input, limit)
    edits = [tool_input] if tool == "Edit" else tool_input.get("edits") if tool == "MultiEdit" else None
    if not isinstance(edits, list):
        return None
    text = before
    for e in edits:
        old, new = (e.get("old_string"), e.get("new_string")) if isinstance(e, dict) else (None, None)
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        every = e.get("replace_all") is True
        if limit is not None:
            size = len(text) + (text.count(old) if every else 1) * (len(new) - len(old))
            if size > limit:
                raise ResultTooLarge(size)
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text


def notebook_edited(before: str, tool_input: JSON, limit: int | None = None) -> str | None:
    """A notebook's text once NotebookEdit replaced a cell's source (found by `cell_id`) or
    deleted the cell, written back in the notebook's own layout (its indent, its key order,
    sources as lists of lines or as strings); None when that cannot be told exactly (another
    layout, an insert - whose new cell's id Claude Code chooses -, no such cell): never a guess."""
    mode = tool_input.get("edit_mode", "replace")
    cell_id, source = tool_input.get("cell_id"), tool_input.get("new_source")
    if mode not in ("replace", "delete") or not isinstance(cell_id, str):
        return None
    if mode == "replace" and (not isinstance(source, str) or (limit is not None and len(source) > limit)):
        return None
    try:
        notebook = json.loads(before)
    except ValueError:
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    found = (
        [i for i, c in enumerate(cells) if isinstance(c, dict) and c.get("id") == cell_id]
        if isinstance(cells, list)
        else []
    )
    if len(found) != 1:
        return None
    layout = _layout(notebook, before)
    if layout is None:
        return None
    assert isinstance(cells, list)
    if mode == "delete":
        del cells[found[0]]
    elif isinstance(source, str):
        cell = cells[found[0]]
        cell["source"] = source.splitlines(keepends=True) if isinstance(cell.get("source"), list) else source
        kind = tool_input.get("cell_type")
        if kind in ("code", "markdown") and kind != cell.get("cell_type"):
            return None  # a change of kind changes more than the source (outputs): not told exactly
    after = json.dumps(notebook, indent=layout[0], ensure_ascii=layout[1]) + layout[2]
    return None if limit is not None and len(after) > limit else after


def _layout(notebook: object, text: str) -> tuple[int, bool, str] | None:
    """(indent, ensure_ascii, ending) that write `notebook` back as exactly `text`, or None."""
    ending = "\n" if text.endswith("\n") else ""
    for indent in (1, 2, 4):
        for ascii_only in (False, True):
            if json.dumps(notebook, indent=indent, ensure_ascii=ascii_only) + ending == text:
                return indent, ascii_only, ending
    return None


def transcripts_folder(env: Mapping[str, str] | None = None) -> str:
    """Where Claude Code keeps its sessions' transcripts: `$CLAUDE_CONFIG_DIR/projects`, else
    `~/.claude/projects` (`<project folder>/<session id>.jsonl` in there), in `env` (None: this
    process's environment)."""
    env = os.environ if env is None else env
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(config, "projects")


def _open_transcript(
    transcript: str, session: str, env: Mapping[str, str] | None = None
) -> tuple[int, os.stat_result] | None:
    """A read handle on the session's own transcript, only where Claude Code keeps it: the file
    `<session id>.jsonl` under transcripts_folder() (as given or resolved), reached below that
    folder without following any symlink, a regular file. None otherwise: a hook's input names
    the file, and over HTTP anyone with the token writes that input."""
    if os.path.basename(transcript) != f"{session}.jsonl" or not os.path.isabs(transcript):
        return None
    path = os.path.normpath(transcript)
    base = transcripts_folder(env)
    for top in dict.fromkeys((os.path.normpath(base), os.path.realpath(base))):
        if not path.startswith(top.rstrip("/") + "/"):
            continue
        try:
            fd = os.open(os.path.realpath(base), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            for part in os.path.relpath(os.path.dirname(path), top).split("/"):
                if part in ("", "."):
                    continue
                below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = below
            return safe.open_file(fd, os.path.basename(path), transcript)
        except (StetError, OSError):
            return None
        finally:
            os.close(fd)
    return None


def turn_prompt(transcript: object, session: str, env: Mapping[str, str] | None = None) -> str | None:
    """What the developer asked in this turn: the last prompt they typed, read from the end of
    Claude Code's transcript (JSON lines; `transcript_path` of every hook input), only the
    session's own where Claude Code keeps it (_open_transcript). At most TRANSCRIPT_TAIL bytes
    are read, never through a symlink nor from a FIFO or a device; None when it cannot be told
    that way."""
    if not isinstance(transcript, str):
        return None
    opened = _open_transcript(transcript, session, env)
    if opened is None:
        return None
    fd, st = opened
    try:
        start = max(0, st.st_size - TRANSCRIPT_TAIL)
        data = os.pread(fd, st.st_size - start, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    for raw in reversed(lines[1:] if start else lines):  # a line cut by the start is not read
        if b'"user"' in raw:
            prompt = _typed(raw)
            if prompt is not None:
                return prompt
    return None


def _typed(raw: bytes) -> str | None:
    """The prompt of one transcript line, if it is one the developer typed (not a tool's result,
    an injected note, a compaction summary, a local command's output, or an entry Claude Code
    wrote itself: a background subagent's `<task-notification>`, marked `promptSource: "system"`
    and `origin.kind: "task-notification"`)."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("type") != "user"
        or entry.get("isMeta")
        or entry.get("isCompactSummary")
        or _by_claude_code(entry)
    ):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(not isinstance(b, dict) or b.get("type") != "text" for b in content):
            return None  # tool results (and images): not a typed prompt
        content = " ".join(str(b.get("text", "")) for b in content)
    if not isinstance(content, str) or not content.strip() or content.lstrip().startswith(NOT_TYPED):
        return None
    return content


NOT_TYPED = ("<command-", "<local-", "<task-notification>")  # what Claude Code writes as a user entry


def _by_claude_code(entry: JSON) -> bool:
    """A user entry Claude Code wrote itself (its source "system", or an origin other than a
    prompt, e.g. a finished background task), wherever the entry carries the marks."""
    for where in (entry, entry.get("message")):
        if not isinstance(where, dict):
            continue
        origin = where.get("origin")
        kind = origin.get("kind") if isinstance(origin, dict) else None
        if where.get("promptSource") == "system" or kind == "task-notification":
            return True
    return False


async def _task_exists(review: Review, task_id: str) -> bool:
    return await TaskRecords(review.state).exists(task_id)


def stop_message(answer: Captured, task: str) -> str:
    parts = []
    if answer.proposal_id:
        n = len(answer.hunks)
        where = "left in the files" if answer.keep else "taken out of the files"
        parts.append(f"Stet: {n} hunk(s) of this turn are waiting for review ({where}; task {task})")
    for r in answer.refused:
        parts.append(f"Stet: {r.path} not captured: {r.why}")
    return bounded(parts[0], parts[1:], more="`stet status` and the capture's answer") if parts else ""


# --- configuration -------------------------------------------------------------------------
def stet_command(given: str | None) -> tuple[list[str], str | None]:
    """The words that start Stet for Claude Code, and a note for the user (None: nothing to say).

    `given` (--stet) is a program - a path, spaces and all, or a name on PATH - or a command
    line split like a shell splits it (`python -m stet`); its program must exist and be
    executable (relative paths are made absolute: hooks run from the session's folder).
    Without it: `stet` when it is on PATH, else the Stet running now. Raises InvalidParams."""
    if given is None:
        if shutil.which("stet"):
            return ["stet"], None
        me = os.path.abspath(sys.argv[0])
        words = [me] if os.path.basename(me) == "stet" and _program(me) else [sys.executable, "-m", "stet"]
        return words, f"`stet` is not on PATH here: Claude Code will run {shlex.join(words)} (--stet chooses another)"
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


def hook_command(stet: list[str], keep: bool) -> str:
    """The hooks' command: a shell command line, each word quoted for `/bin/sh`."""
    return shlex.join([*stet, "hook", AGENT, *([] if keep else ["--restore"])])


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


def http_hook(port: int, keep: bool) -> JSON:
    """Claude Code's `http` hook pointing at `stet mcp --http PORT` on this machine; the token
    goes through the environment variable STET_TOKEN (allowedEnvVars), never into the file."""
    return {
        "type": "http",
        "url": f"http://127.0.0.1:{port}{HOOK_PATH}" + ("" if keep else "?restore=1"),
        "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
        "allowedEnvVars": [TOKEN_ENV],
        "timeout": HTTP_TIMEOUT,
    }


def wanted_hooks(command: str, http: JSON | None = None) -> dict[str, JSON]:
    """Stet's hook for each event: the command hook running `command`, or with `http` that hook
    for every event Claude Code sends over HTTP (SessionStart keeps the command)."""
    return {event: http if http is not None and event in HTTP_EVENTS else command_hook(command) for event, _ in EVENTS}


def _kind(hook: JSON) -> str:
    return "http" if hook.get("type") == "http" else "command"


def is_stets(hook: object) -> bool:
    """A hook `stet integrate claude-code` wrote: an http hook to Stet's route (any port, with
    or without ?restore=1), or a command ending in `hook claude-code` (or `... --restore`)."""
    if not isinstance(hook, dict):
        return False
    if hook.get("type", "command") == "http":
        url = hook.get("url")
        return isinstance(url, str) and url.split("?")[0].endswith(HOOK_PATH)
    command = hook.get("command")
    return isinstance(command, str) and command.strip().endswith((f"hook {AGENT}", f"hook {AGENT} --restore"))


def _same(a: object, hook: JSON) -> bool:
    if not isinstance(a, dict):
        return False
    key = "url" if hook["type"] == "http" else "command"
    return bool(a.get("type", "command") == hook["type"] and a.get(key) == hook[key])


def settings_with(settings: Any, wanted: dict[str, JSON]) -> tuple[JSON, list[str]]:
    """Claude Code's settings with Stet's hook of each event as `wanted` (wanted_hooks) says, and
    what changed. A hook of Stet's that is not the wanted one (the other kind, another port,
    another command) is replaced in its place, a second copy removed; every other hook, entry
    and setting stays exactly as it is. Refuses settings it cannot merge into safely."""
    if not isinstance(settings, dict):
        raise InvalidParams("the settings file does not hold a JSON object; fix it or move it aside")
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidParams('"hooks" in the settings is not an object; fix it first')
    changed = []
    for event, matcher in EVENTS:
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
            if not isinstance(e, dict) or not isinstance(e.get("hooks"), list) or not any(map(is_stets, e["hooks"])):
                continue
            mine = []
            for h in e["hooks"]:
                if not is_stets(h) or (_same(h, want) and not kept):
                    kept = kept or is_stets(h)
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
    servers = out.setdefault("enabledMcpjsonServers", [])
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
