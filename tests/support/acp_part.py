"""Stet's ACP part driven in this process as the relay drives it: messages in, verdicts out.

`Peers` holds a ReviewPart and the requests in flight each way (to give a response the request
it answers, as the relay pairs them); its helpers build the messages an editor and an agent send
(Claude Code's ACP adapter's shapes, as seen for real). The review is read through the CLI
(tests/support/calls.py), a process of its own as far as the store is concerned."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from stet.acp.message import Message, Reply
from stet.acp.review_part import ReviewPart
from stet.review import open_review
from support.calls import stet_in

OPTIONS = [
    {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def msg(body) -> Message:
    return Message(json.dumps(body).encode(), body)


async def make_store(root: Path) -> None:
    """The workspace's store, as `stet integrate` leaves it."""
    opened = await open_review([str(root)], str(root / ".stet" / "stet.db"), create=True)
    await opened.review.close()


class Peers:
    def __init__(self, root: Path, *, argv=("npx", "@zed-industries/claude-code-acp@0.16.2"), name=None, env=None):
        self.root = root
        self.part = ReviewPart(agent_name=name, argv=list(argv), env=dict(env or {}))
        self.to_agent: dict[int, Message] = {}  # the editor's requests in flight
        self.to_editor: dict[int, Message] = {}  # the agent's
        self.next_id = 0

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    # --- sending ----------------------------------------------------------------------------
    async def editor_asks(self, method: str, params) -> tuple[int, object]:
        i = self._id()
        m = msg({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        self.to_agent[i] = m
        return i, await self.part.from_editor(m, None)

    async def agent_answers(self, i: int, result=None, error=None):
        body = {"jsonrpc": "2.0", "id": i, **({"error": error} if error else {"result": result})}
        return await self.part.from_agent(msg(body), self.to_agent.pop(i))

    async def agent_asks(self, method: str, params) -> tuple[int, object]:
        i = 1000 + self._id()
        m = msg({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        self.to_editor[i] = m
        return i, await self.part.from_agent(m, None)

    async def editor_answers(self, i: int, result=None, error=None):
        body = {"jsonrpc": "2.0", "id": i, **({"error": error} if error else {"result": result})}
        return await self.part.from_editor(msg(body), self.to_editor.pop(i))

    async def agent_tells(self, params):
        return await self.part.from_agent(msg({"jsonrpc": "2.0", "method": "session/update", "params": params}), None)

    # --- whole steps ------------------------------------------------------------------------
    async def start(self, agent_name="@zed-industries/claude-code-acp", writes=True) -> None:
        caps = {"fs": {"readTextFile": True, "writeTextFile": writes}}
        i, _ = await self.editor_asks("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
        info = {"name": agent_name, "version": "0.16.2"} if agent_name else None
        await self.agent_answers(
            i, {"protocolVersion": 1, "agentCapabilities": {}, **({"agentInfo": info} if info else {})}
        )

    async def new_session(self, sid: str, cwd: Path | None = None) -> None:
        i, _ = await self.editor_asks("session/new", {"cwd": str(cwd or self.root), "mcpServers": []})
        await self.agent_answers(i, {"sessionId": sid})

    async def load_session(self, sid: str, cwd: Path | None = None) -> None:
        i, _ = await self.editor_asks(
            "session/load", {"sessionId": sid, "cwd": str(cwd or self.root), "mcpServers": []}
        )
        await self.agent_answers(i, None)

    async def prompt(self, sid: str, text: str = "do it"):
        i, verdict = await self.editor_asks(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )
        await self.agent_answers(i, {"stopReason": "end_turn"})
        return verdict

    async def tool_call(self, sid, tcid, path, old, new, *, kind="tool_call", status="pending"):
        update = {
            "sessionUpdate": kind,
            "toolCallId": tcid,
            "status": status,
            "content": [{"type": "diff", "path": str(path), "oldText": old, "newText": new}],
        }
        if kind == "tool_call":
            update.update(title="Edit", kind="edit")
        return await self.agent_tells({"sessionId": sid, "update": update})

    async def permission(self, sid, tcid, options=OPTIONS, content=None):
        tool = {"toolCallId": tcid, "rawInput": {}, "title": "Edit"}
        if content is not None:
            tool["content"] = content
        return await self.agent_asks(
            "session/request_permission", {"sessionId": sid, "toolCall": tool, "options": options}
        )

    async def write(self, sid, path: Path, text: str, *, editor_writes=True, error=None):
        """The agent's fs/write_text_file, the editor writing the file, and its answer."""
        i, verdict = await self.agent_asks("fs/write_text_file", {"sessionId": sid, "path": str(path), "content": text})
        if editor_writes and error is None:
            path.write_text(text)
        await self.editor_answers(i, None, error)
        return verdict

    async def edit(self, sid, tcid, path: Path, old: str, new: str, *, allow=True):
        """One Edit as Claude Code's adapter shows it: an empty tool call, the same with a
        snippet diff, the permission, the write of the whole file, the completed update with
        context. Returns the verdicts."""
        verdicts = [
            await self.agent_tells(
                {
                    "sessionId": sid,
                    "update": {"sessionUpdate": "tool_call", "toolCallId": tcid, "status": "pending", "content": []},
                }
            )
        ]
        verdicts.append(await self.tool_call(sid, tcid, path, old, new))
        i, v = await self.permission(sid, tcid)
        verdicts.append(v)
        if v.__class__.__name__ == "Reply":
            return verdicts
        verdicts.append(
            await self.editor_answers(
                i, {"outcome": {"outcome": "selected", "optionId": "allow" if allow else "reject"}}
            )
        )
        if not allow:
            verdicts.append(await self.tool_call(sid, tcid, path, old, new, kind="tool_call_update", status="failed"))
            return verdicts
        before = path.read_text()
        after = before.replace(old, new, 1)
        verdicts.append(await self.write(sid, path, after))
        lines = after.splitlines(keepends=True)
        at = next(n for n, line in enumerate(lines) if new.splitlines()[0] in line) if new else 0
        ctx_new = "".join(lines[max(0, at - 1) : at + 2])
        ctx_old = ctx_new.replace(new, old, 1)
        verdicts.append(
            await self.tool_call(sid, tcid, path, ctx_old, ctx_new, kind="tool_call_update", status="completed")
        )
        return verdicts


async def status(root: Path, *args: str) -> dict:
    ran = await stet_in(["status", "--json", "--all", *args], root)
    assert ran.code == 0, ran.err
    return json.loads(ran.out)


async def hunks(root: Path, *args: str) -> list[dict]:
    return (await status(root, *args))["hunks"]


# --- ACP v2 (draft) -------------------------------------------------------------------------
# The shapes of ACP protocol version 2 as its schema gives them: schema/v2/schema.json of
# agentclientprotocol/agent-client-protocol (2.0.0-alpha.3) and its pages
# https://agentclientprotocol.com/protocol/v2/migration, /protocol/v2/tool-calls (diffs,
# permissions), /protocol/v2/prompt-lifecycle and /protocol/v2/session-setup.


def git_patch(path: Path, before: str | None, after: str) -> str:
    """A `git_patch` of one file as v2's Diff carries it: `diff --git` with absolute paths."""
    old = "/dev/null" if before is None else str(path)
    lines = difflib.unified_diff((before or "").splitlines(True), after.splitlines(True), old, str(path))
    head = f"diff --git {path} {path}\n" + ("new file mode 100644\n" if before is None else "")
    return head + "".join(lines)


def v2_diff(path: Path, before: str | None, after: str, *, operation=None, patch=True) -> dict:
    """A v2 `diff` tool-call content item: structured `changes` and a `git_patch`."""
    change = {"operation": operation or ("add" if before is None else "modify"), "path": str(path), "fileType": "text"}
    item: dict = {"type": "diff", "changes": [change]}
    if patch:
        item["patch"] = {"format": "git_patch", "text": git_patch(path, before, after)}
    return item


REJECT_V2 = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]


class PeersV2(Peers):
    """The same peers speaking ACP v2: `info`/`capabilities`, no client file system, tool calls
    as `tool_call_update` upserts, permissions with a `subject`, `session/resume`, and a prompt
    whose answer only acknowledges it (the turn ends with an idle `state_update`)."""

    async def start(self, agent_name="@acme/coder", writes=False) -> None:
        info = {"name": "zed", "version": "1.0.0"}
        i, _ = await self.editor_asks("initialize", {"protocolVersion": 2, "info": info, "capabilities": {}})
        await self.agent_answers(
            i,
            {
                "protocolVersion": 2,
                "info": {"name": agent_name, "title": "Coder", "version": "0.3.0"},
                "capabilities": {"session": {"prompt": {"image": {}}}},
                "authMethods": [],
            },
        )

    async def new_session(self, sid: str, cwd: Path | None = None) -> None:
        i, _ = await self.editor_asks("session/new", {"cwd": str(cwd or self.root)})
        await self.agent_answers(i, {"sessionId": sid, "configOptions": []})

    async def resume_session(self, sid: str, cwd: Path | None = None, replay=(), replay_from=True):
        """`session/resume` (with `replayFrom: start`, v1's load): the agent replays `replay`
        (session/update params) before its answer. Returns the verdicts of the replay."""
        params = {"sessionId": sid, "cwd": str(cwd or self.root)}
        if replay_from:
            params["replayFrom"] = {"type": "start"}
        i, _ = await self.editor_asks("session/resume", params)
        verdicts = [await self.agent_tells(p) for p in replay]
        await self.agent_answers(i, {"configOptions": []})
        return verdicts

    async def prompt(self, sid: str, text: str = "do it"):
        i, verdict = await self.editor_asks(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )
        await self.agent_answers(i, {})
        for update in (
            {"sessionUpdate": "user_message", "messageId": f"m-{i}", "content": [{"type": "text", "text": text}]},
            {"sessionUpdate": "state_update", "state": "running"},
        ):
            await self.agent_tells({"sessionId": sid, "update": update})
        return verdict

    async def idle(self, sid: str):
        update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        return await self.agent_tells({"sessionId": sid, "update": update})

    async def upsert(self, sid: str, tcid: str, **fields):
        """A `tool_call_update`: creates the tool call at its first id, patches it after."""
        return await self.agent_tells(
            {"sessionId": sid, "update": {"sessionUpdate": "tool_call_update", "toolCallId": tcid, **fields}}
        )

    async def chunk(self, sid: str, tcid: str, content: dict):
        """A `tool_call_content_chunk`: one content item appended to the tool call."""
        update = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tcid, "content": content}
        return await self.agent_tells({"sessionId": sid, "update": update})

    async def permission(self, sid, tcid, options=REJECT_V2, content=None):
        tool: dict = {"toolCallId": tcid}
        if content is not None:
            tool["content"] = content
        params = {
            "sessionId": sid,
            "title": "Approve file edit?",
            "description": "Allow the agent to edit a.py?",
            "subject": {"type": "tool_call", "toolCall": tool},
            "options": options,
        }
        return await self.agent_asks("session/request_permission", params)

    async def edit(self, sid, tcid, path: Path, before: str, after: str, *, allow=True):
        """One edit as a v2 agent reports it: the tool call created, its diff in a later patch,
        the permission, the agent writing the file itself, the completed patch. Returns the verdicts."""
        verdicts = [await self.upsert(sid, tcid, title="Edit a.py", kind="edit", status="pending")]
        verdicts.append(await self.upsert(sid, tcid, content=[v2_diff(path, before, after)]))
        i, v = await self.permission(sid, tcid)
        verdicts.append(v)
        if isinstance(v, Reply):
            return verdicts
        verdicts.append(
            await self.editor_answers(
                i, {"outcome": {"outcome": "selected", "optionId": "allow-once" if allow else "reject-once"}}
            )
        )
        if not allow:
            verdicts.append(await self.upsert(sid, tcid, status="failed"))
            return verdicts
        path.write_text(after)
        verdicts.append(await self.upsert(sid, tcid, status="completed"))
        return verdicts
