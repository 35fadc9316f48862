"""`stet acp -- AGENT` when the editor and the agent agree ACP protocol version 2 (the draft of
July 2026): the fake agent (tests/support/acp_fake_agent.py --version 2) speaks v2 for real, as a
process behind Stet; the change it reports in a later patch of its tool call is a pending kept
hunk before the editor sees it, the redo of the change the developer rejected is refused at the
permission request with its reject option, and the agent is told why at its next prompt."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from stet.acp.wire import LINE_BOUND
from support.clitools import make_repo, stet, stet_json

AGENT = [sys.executable, str(Path(__file__).parents[1] / "support" / "acp_fake_agent.py")]


class Editor:
    """The editor's end, speaking v2: a turn ends with the idle `state_update`, not with the
    prompt's answer; the agent's permission requests are allowed."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.seen: list[dict] = []

    async def send(self, body: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(body).encode() + b"\n")
        await self.proc.stdin.drain()

    async def read_until(self, done, timeout: float = 60) -> dict:
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                line = await self.proc.stdout.readline()
                assert line, "stet closed its stdout"
                msg = json.loads(line)
                self.seen.append(msg)
                if msg.get("method") == "session/request_permission" and "id" in msg:
                    answer = {"outcome": {"outcome": "selected", "optionId": "allow"}}
                    await self.send({"jsonrpc": "2.0", "id": msg["id"], "result": answer})
                if done(msg):
                    return msg

    async def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        rid = self.next_id
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await self.read_until(lambda m: m.get("id") == rid and "method" not in m)

    async def turn(self, sid: str, text: str) -> list[dict]:
        """A prompt, its answer (`{}`: accepted), and the updates until the agent is idle again."""
        start = len(self.seen)
        answer = await self.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
        assert answer["result"] == {}, answer
        await self.read_until(lambda m: (m.get("params") or {}).get("update", {}).get("state") == "idle")
        return self.seen[start:]

    async def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return await asyncio.wait_for(self.proc.wait(), 60)


def received(tmp_path: Path) -> list[dict]:
    return [json.loads(x) for x in (tmp_path / "agent-received").read_bytes().splitlines() if x.strip()]


async def test_a_v2_session_recorded_refused_and_told(tmp_path):
    root = make_repo(tmp_path / "ws")
    (root / "a.py").write_text("x = 1\n")
    assert stet("init", cwd=root).returncode == 0
    argv = [sys.executable, "-m", "stet", "acp", "--", *AGENT, "--version", "2"]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        "--received",
        str(tmp_path / "agent-received"),
        cwd=root,
        env={**os.environ, "STET_RESIDENT": "off"},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=2 * LINE_BOUND,
    )
    editor = Editor(proc)
    init = await editor.request(
        "initialize", {"protocolVersion": 2, "info": {"name": "editor", "version": "1"}, "capabilities": {}}
    )
    assert init["result"]["protocolVersion"] == 2 and init["result"]["info"]["name"] == "fake-agent", init
    sid = (await editor.request("session/new", {"cwd": str(root)}))["result"]["sessionId"]

    seen = await editor.turn(sid, "diff permission write")
    patched = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    [with_diff] = [u for u in patched if u["sessionUpdate"] == "tool_call_update" and u.get("content")]
    assert with_diff["futureField"] == {"kept": True} and "changes" in with_diff["content"][0]
    assert [m["method"] for m in seen if "method" in m and "id" in m] == ["session/request_permission"]
    [h] = stet_json("status", "--all", cwd=root)["hunks"]
    assert (h["status"], h["kept"], h["inFile"], h["taskId"]) == ("pending", True, True, f"acp-fake-agent-{sid}")
    assert (root / "a.py").read_text() == "x = 2\n"

    p = stet("reject", h["id"], "--feedback", "keep x at one", cwd=root)
    assert p.returncode == 0, p.stderr
    assert (root / "a.py").read_text() == "x = 1\n"

    seen = await editor.turn(sid, "diff permission")
    # Refused for the developer: the editor is not asked; the agent got the reject option.
    assert [m for m in seen if m.get("method") == "session/request_permission"] == []
    reported = [
        u["content"]["text"]
        for m in seen
        if m.get("method") == "session/update"
        and (u := m["params"]["update"])["sessionUpdate"] == "agent_message_chunk"
    ]
    assert len(reported) == 1 and '"optionId": "reject"' in reported[0], reported

    await editor.turn(sid, "nothing")
    assert await editor.close() == 0
    prompts = [m["params"]["prompt"] for m in received(tmp_path) if m.get("method") == "session/prompt"]
    assert [len(p) for p in prompts] == [1, 2, 2], prompts  # the rejection, then the refused redo
    assert "keep x at one" in prompts[1][1]["text"] and "keep x at one" in prompts[2][1]["text"], prompts
    assert (root / "a.py").read_text() == "x = 1\n"
    # The redo was the very change rejected before (the same text in the same session's task): one hunk.
    # The first change, rejected by the developer; its redo, recorded as the agent made it and
    # rejected for the developer with the same feedback when Stet refused its permission.
    done = stet_json("status", "--all", cwd=root)["hunks"]
    assert [(x["status"], x["feedback"]) for x in done] == [("rejected", done[0]["feedback"])] * 2, done
    assert "keep x at one" in done[0]["feedback"]
