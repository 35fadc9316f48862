"""What Stet's part reads in an ACP message, per protocol version: the few things it acts on, read
from v1's shapes or v2's into the same neutral events (review_part.py acts on those, once).

v1: https://agentclientprotocol.com/protocol/v1 (schema/v1/schema.json). v2, the draft published
July 2026, as read on 6 December 2026 (schema/v2/schema.json of agentclientprotocol/
agent-client-protocol, 2.0.0-alpha.3; https://agentclientprotocol.com/protocol/v2/migration,
/protocol/v2/tool-calls, /protocol/v2/prompt-lifecycle, /protocol/v2/session-setup):

- `initialize`'s answer names the agent in `info` (v1: `agentInfo`);
- sessions: `session/new` and `session/resume` (`replayFrom: start` replays the history before
  its answer; v1: `session/load`);
- a tool call is reported by `tool_call_update` upserts patched by id (omitted: unchanged; v1
  also had `tool_call`), and `tool_call_content_chunk` appends one content item; its status adds
  `cancelled`;
- a diff is `{type: "diff", changes: [{operation, path, fileType?}], patch?: {format: "git_patch",
  text}}` (v1: `path`, `oldText`, `newText`): Stet records a text file added or modified whose
  change the patch holds; a delete, a move or copy, a binary file, a diff without a patch of
  that file: not recorded, passed on, said once;
- `session/request_permission` names its tool call in `subject: {type: "tool_call", toolCall}`
  (v1: `toolCall`); options and outcomes are v1's;
- `session/prompt` is v1's (its answer, `{}`, only acknowledges it: Stet does not look at it);
- no client file system: no `fs/write_text_file`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..domain import patches
from .message import JSON
from .recording import Resolved, resolve, resolve_patch

Place = Callable[[str | None, bool], Resolved]  # (the file's text now, reported done) -> the change


@dataclass(frozen=True)
class Change:
    """One file's change a tool call shows: its absolute path, and how it is placed in the file."""

    path: str
    place: Place


@dataclass(frozen=True)
class ToolCall:
    """What one message says of a tool call: its id, its status when it says one, the file
    changes it shows, and the diffs Stet does not record ((kind, why), each said once)."""

    tcid: str
    status: str | None
    changes: tuple[Change, ...] = ()
    unread: tuple[tuple[str, str], ...] = ()


class Shape:
    """The messages of one protocol version, as Stet reads them."""

    version = 0
    from_editor: frozenset[str] = frozenset()  # requests from the editor the part looks at
    asked_of_agent: frozenset[str] = frozenset()  # requests whose answers it looks at
    asked_of_editor: frozenset[str] = frozenset()  # the agent's requests whose answers it looks at
    replays: frozenset[str] = frozenset()  # requests before whose answer a session's updates are history
    ended: frozenset[str] = frozenset()  # statuses of a tool call that ended (its change maybe not made)
    upserts = False  # a tool call's status holds until a later update changes it

    def agent_name(self, result: JSON) -> str | None:
        raise NotImplementedError

    def looks(self, update: JSON) -> bool:
        """Cheap: whether a session/update may be a tool call with something for Stet."""
        raise NotImplementedError

    def tool_call(self, update: JSON) -> ToolCall | None:
        raise NotImplementedError

    def status(self, update: JSON) -> tuple[str, str | None] | None:
        """An upsert's (tool call id, status) when it patches the status (None: cleared)."""
        return None

    def permission(self, params: JSON) -> ToolCall | None:
        """The tool call a permission request is about (with the changes it shows), if any."""
        raise NotImplementedError

    def permission_id(self, params: JSON) -> str | None:
        raise NotImplementedError

    @staticmethod
    def opened(method: str | None, params: JSON, result: object) -> tuple[str, str] | None:
        """The session (id, cwd) a request's answer opens: session/new's answer names it, a
        load or resume names it in the request."""
        told = result if method == "session/new" else params
        sid = told.get("sessionId") if isinstance(told, dict) else None
        cwd = params.get("cwd")
        return (sid, cwd) if isinstance(sid, str) and isinstance(cwd, str) else None


def _name(info: object) -> str | None:
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def _diffs(content: object) -> Iterable[JSON]:
    return (i for i in content if isinstance(i, dict) and i.get("type") == "diff") if isinstance(content, list) else ()


def _one_of(value: object, names: frozenset[str]) -> bool:
    return isinstance(value, str) and value in names  # never a TypeError for an object or a list


def _has_diff(content: object) -> bool:
    return isinstance(content, list) and any(isinstance(i, dict) and i.get("type") == "diff" for i in content)


class V1(Shape):
    version = 1
    from_editor = frozenset({"initialize", "session/prompt", "session/load"})
    asked_of_agent = frozenset({"initialize", "session/new", "session/load"})
    asked_of_editor = frozenset({"fs/write_text_file", "session/request_permission"})
    ended = frozenset({"failed"})
    TOOL_UPDATES = frozenset({"tool_call", "tool_call_update"})

    def agent_name(self, result: JSON) -> str | None:
        return _name(result.get("agentInfo"))

    def looks(self, update: JSON) -> bool:
        if not _one_of(update.get("sessionUpdate"), self.TOOL_UPDATES):
            return False
        return _has_diff(update.get("content")) or _one_of(update.get("status"), self.ended)

    def tool_call(self, update: JSON) -> ToolCall | None:
        tcid = update.get("toolCallId")
        if not isinstance(tcid, str):
            return None
        status = update.get("status")
        return self._read(tcid, status if isinstance(status, str) else None, update.get("content"))

    def permission(self, params: JSON) -> ToolCall | None:
        tool = params.get("toolCall")
        tcid = self.permission_id(params)
        # v1 reads a permission's tool call for the diffs it shows (a change not made yet).
        return self._read(tcid, None, tool.get("content")) if tcid and isinstance(tool, dict) else None

    def permission_id(self, params: JSON) -> str | None:
        tool = params.get("toolCall")
        tcid = tool.get("toolCallId") if isinstance(tool, dict) else None
        return tcid if isinstance(tcid, str) else None

    @staticmethod
    def _read(tcid: str, status: str | None, content: object) -> ToolCall:
        changes, unread = [], []
        for item in _diffs(content):
            path, old, new = item.get("path"), item.get("oldText"), item.get("newText")
            if not isinstance(path, str) or not isinstance(new, str) or not (old is None or isinstance(old, str)):
                unread.append(("diff-shape", "a tool call's diff without a path or texts: not recorded"))
                continue
            changes.append(Change(path, _texts(old, new)))
        return ToolCall(tcid, status, tuple(changes), tuple(unread))


def _texts(old: str | None, new: str) -> Place:
    return lambda now, made: resolve(old, new, now, made=made)


class V2(Shape):
    version = 2
    from_editor = frozenset({"initialize", "session/prompt", "session/resume"})
    asked_of_agent = frozenset({"initialize", "session/new", "session/resume"})
    asked_of_editor = frozenset({"session/request_permission"})
    replays = frozenset({"session/resume"})
    ended = frozenset({"failed", "cancelled"})
    upserts = True
    UPDATE, CHUNK = "tool_call_update", "tool_call_content_chunk"

    def agent_name(self, result: JSON) -> str | None:
        return _name(result.get("info"))

    def looks(self, update: JSON) -> bool:
        kind = update.get("sessionUpdate")
        if kind == self.UPDATE:
            return _has_diff(update.get("content")) or _one_of(update.get("status"), self.ended)
        if kind == self.CHUNK:
            content = update.get("content")
            return isinstance(content, dict) and content.get("type") == "diff"
        return False

    def status(self, update: JSON) -> tuple[str, str | None] | None:
        tcid = update.get("toolCallId")
        if update.get("sessionUpdate") != self.UPDATE or not isinstance(tcid, str) or "status" not in update:
            return None
        status = update["status"]
        return tcid, status if isinstance(status, str) else None

    def tool_call(self, update: JSON) -> ToolCall | None:
        tcid = update.get("toolCallId")
        if not isinstance(tcid, str):
            return None
        status = update.get("status")
        content = update.get("content")
        items = [content] if update.get("sessionUpdate") == self.CHUNK else content
        return self._read(tcid, status if isinstance(status, str) else None, items)

    def permission(self, params: JSON) -> ToolCall | None:
        tool = self._subject(params)
        return self.tool_call(tool) if tool is not None else None

    def permission_id(self, params: JSON) -> str | None:
        tool = self._subject(params)
        tcid = tool.get("toolCallId") if tool is not None else None
        return tcid if isinstance(tcid, str) else None

    @staticmethod
    def _subject(params: JSON) -> JSON | None:
        subject = params.get("subject")
        if not isinstance(subject, dict) or subject.get("type") != "tool_call":
            return None  # none, a command, or a kind Stet does not know: nothing of a change
        tool = subject.get("toolCall")
        return tool if isinstance(tool, dict) else None

    @staticmethod
    def _read(tcid: str, status: str | None, content: object) -> ToolCall:
        changes: list[Change] = []
        unread: list[tuple[str, str]] = []
        for item in _diffs(content):
            got, why = _diff(item)
            changes += got
            unread += why
        return ToolCall(tcid, status, tuple(changes), tuple(unread))


def _diff(item: JSON) -> tuple[list[Change], list[tuple[str, str]]]:
    """A v2 diff's changes Stet records: a text file added or modified, with its patch."""
    listed = item.get("changes")
    if not isinstance(listed, list):
        return [], [("diff-shape", "a tool call's diff without its changes: not recorded")]
    files, unread = _patch_files(item.get("patch"))
    got: list[Change] = []
    for change in listed:
        if not isinstance(change, dict) or not isinstance(change.get("path"), str):
            unread.append(("diff-shape", "a tool call's diff change without a path: not recorded"))
            continue
        path, op, kind = change["path"], change.get("operation"), change.get("fileType")
        if op not in ("add", "modify") or kind not in (None, "text"):
            what = f"{op!r} of a {kind} file" if kind else repr(op)
            unread.append((f"op:{path}:{op}:{kind}", f"{path}: not recorded: Stet records text changes, not a {what}"))
            continue
        found = files.get(path)
        if found is None:
            unread.append((f"nopatch:{path}", f"{path}: not recorded: the diff comes without a text patch of it"))
            continue
        got.append(Change(path, _patched(found)))
    return got, unread


def _patch_files(patch: object) -> tuple[dict[str, patches.FilePatch], list[tuple[str, str]]]:
    """A diff's `git_patch`, by the absolute path of each file it changes."""
    if patch is None:
        return {}, []
    text = patch.get("text") if isinstance(patch, dict) else None
    if not isinstance(patch, dict) or patch.get("format") != "git_patch" or not isinstance(text, str):
        fmt = patch.get("format") if isinstance(patch, dict) else None
        return {}, [(f"format:{fmt}", f"a diff's patch in the format {fmt!r}: Stet reads git_patch; not recorded")]
    try:
        parsed = patches.parse(text, strip=0)
    except patches.PatchError as exc:
        return {}, [(f"patch:{exc.reason}", f"a diff's git_patch Stet cannot read ({exc}): not recorded")]
    return {p: f for f in parsed if (p := _absolute(f.new_path or f.old_path)) is not None}, []


def _absolute(path: str | None) -> str | None:
    """A patch's path: absolute as v2 says; `a/` or `b/` before it (git's prefixes) taken off."""
    if path is None:
        return None
    if path[:2] in ("a/", "b/") and path[2:3] == "/":
        path = path[2:]
    return path if path.startswith("/") else None


def _patched(f: patches.FilePatch) -> Place:
    return lambda now, made: resolve_patch(f, now, made=made)


SHAPES: dict[Any, Shape] = {1: V1(), 2: V2()}


def shape_of(version: object) -> Shape | None:
    """The shapes of the version the peers agreed (None: not agreed yet, read as v1); None for
    a version Stet does not read (its connection passes through)."""
    if version is None:
        return SHAPES[1]
    try:
        return SHAPES.get(version)
    except TypeError:  # not a number: an object, a list
        return None
