"""Stet's ACP part driven in this process as the relay drives it: messages in, verdicts out.

`Peers` holds a ReviewPart and the requests in flight each way (to give a response the request
it answers, as the relay pairs them); its helpers build the messages an editor and an agent send
(Claude Code's ACP adapter's shapes, as seen for real). The review is read through the CLI
(tests/support/calls.py), a process of its own as far as the store is concerned."""

from __future__ import annotations

import json
from pathlib import Path

from stet.acp.message import Message
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
