"""A raw scripted editor for `stet acp -- AGENT` run for real as a process: what it writes and reads
is kept byte for byte, the agent's requests are answered as the test says (an `fs/write_text_file`
written to the file, as an editor does), and every message it read is kept in order. The agent is
the fake ACP agent (tests/support/acp_fake_agent.py) unless a test names another."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stet.acp.wire import LINE_BOUND

AGENT = [sys.executable, str(Path(__file__).parent / "acp_fake_agent.py")]
STET = [sys.executable, "-m", "stet"]

Answer = Callable[[dict], Any]  # the params of the agent's request -> the result to send back


def write_file(params: dict) -> None:
    """What an editor does with an fs/write_text_file: the file written, a null result."""
    with open(params["path"], "w", newline="") as f:
        f.write(params["content"])


class Client:
    """The editor's side: what it writes and reads, kept byte for byte."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.sent = bytearray()
        self.got = bytearray()
        self.next_id = 0
        self.seen: list[dict] = []  # every JSON message read, in order

    async def write(self, data: bytes) -> None:
        self.sent += data
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def send(self, body: dict, end: bytes = b"\n", **dumps: object) -> None:
        await self.write(json.dumps(body, **dumps).encode() + end)  # type: ignore[arg-type]

    async def request(self, method: str, params: dict, rid: int | str | None = None, **dumps: object) -> int | str:
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, **dumps)
        return rid

    async def line(self, timeout: float = 30) -> bytes:
        assert self.proc.stdout is not None
        data = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        self.got += data
        return data

    async def message(self, timeout: float = 30) -> dict | None:
        """The next JSON message (kept in `seen`); None at the end of stet's output."""
        while True:
            data = await self.line(timeout)
            if not data:
                return None
            try:
                msg = json.loads(data)
            except ValueError:
                continue
            if isinstance(msg, dict):
                self.seen.append(msg)
                return msg

    async def answer(self, msg: dict, answers: dict[str, Any] | None) -> None:
        """Answer an agent's request: `answers[method]` is the result, or a function of the
        params that gives it (it may act first, e.g. write the file)."""
        result = (answers or {}).get(msg["method"])
        if callable(result):
            result = result(msg.get("params") or {})
        # Answered in another style than the agent's, with the agent's id as it was.
        await self.send({"id": msg["id"], "result": result, "jsonrpc": "2.0"}, separators=(",", ":"))

    async def answer_of(
        self, rid: int | str, answers: dict | None = None, seen: list | None = None, timeout: float = 30
    ) -> dict:
        """Read until the answer to `rid`, answering the agent's requests (by method) on the way."""
        while True:
            msg = await self.message(timeout)
            assert msg is not None, "stet closed its stdout before the answer"
            if seen is not None:
                seen.append(msg)
            if "method" in msg and "id" in msg:
                await self.answer(msg, answers)
            elif "method" not in msg and msg.get("id") == rid:
                return msg

    async def until(self, check: Callable[[dict], bool], answers: dict | None = None, timeout: float = 30) -> dict:
        """Read until a message `check` holds for (answering the agent's requests on the way)."""
        while True:
            msg = await self.message(timeout)
            assert msg is not None, "stet closed its stdout before the message awaited"
            if check(msg):
                return msg
            if "method" in msg and "id" in msg:
                await self.answer(msg, answers)

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def exited(self, timeout: float = 30) -> int:
        """Its exit status once it ended, without waiting for its pipes to close (an agent it
        left running still holds its stderr: asyncio's wait() would wait for that too)."""
        deadline = time.monotonic() + timeout
        while self.proc.returncode is None:
            assert time.monotonic() < deadline, "stet did not end"
            await asyncio.sleep(0.02)
        return self.proc.returncode

    async def exit_code(self, timeout: float = 30) -> int:
        assert self.proc.stdout is not None
        rest = await asyncio.wait_for(self.proc.stdout.read(), timeout)
        self.got += rest
        return await asyncio.wait_for(self.proc.wait(), timeout)


async def start(
    cwd: Path,
    *agent_args: str,
    agent: list[str] | None = None,
    stet_args: tuple[str, ...] = ("--no-review",),
    env: dict[str, str] | None = None,
    own_group: bool = False,
) -> Client:
    """`stet acp STET_ARGS -- AGENT AGENT_ARGS` started in `cwd` (STET_FAULT and STET_DB only as
    `env` gives them); `own_group`: in a process group of its own, as an editor may start it."""
    argv = [*STET, "acp", *stet_args, "--", *(AGENT if agent is None else agent), *agent_args]
    full_env = {k: v for k, v in os.environ.items() if k not in ("STET_FAULT", "STET_DB")}
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=2 * LINE_BOUND + 1024,
        env={**full_env, **(env or {})},
        process_group=0 if own_group else None,
    )
    return Client(proc)


async def stderr_of(client: Client) -> str:
    assert client.proc.stderr is not None
    return (await asyncio.wait_for(client.proc.stderr.read(), 30)).decode("utf-8", "replace")


def recorded(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def received_prompts(path: Path) -> list[dict]:
    """The session/prompt requests the fake agent read (its `--received` file), in order."""
    out = []
    for line in recorded(path).splitlines():
        try:
            body = json.loads(line)
        except ValueError:
            continue
        if isinstance(body, dict) and body.get("method") == "session/prompt":
            out.append(body)
    return out


async def initialize(client: Client, version: int = 1) -> dict:
    rid = await client.request(
        "initialize",
        {"protocolVersion": version, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}},
    )
    answer = await client.answer_of(rid)
    assert "result" in answer, answer
    return answer


async def new_session(client: Client, cwd: Path, version: int = 1) -> str:
    await initialize(client, version)
    rid = await client.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str((await client.answer_of(rid))["result"]["sessionId"])


async def load_session(client: Client, cwd: Path, session: str) -> None:
    await initialize(client)
    rid = await client.request("session/load", {"sessionId": session, "cwd": str(cwd), "mcpServers": []})
    answer = await client.answer_of(rid)
    assert "result" in answer, answer


async def prompt(client: Client, session: str, script: str) -> int | str:
    """A session/prompt whose text is the fake agent's script; returns its id (not awaited)."""
    return await client.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": script}]})


def is_tool_call(msg: dict, tool_call: str | None = None) -> bool:
    if msg.get("method") != "session/update":
        return False
    update = (msg.get("params") or {}).get("update") or {}
    if update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
        return False
    return tool_call is None or update.get("toolCallId") == tool_call


def pid_in(path: Path, within: float = 30) -> int:
    """The pid a process wrote to `path` (the fake agent's --pidfile), waited for."""
    deadline = time.monotonic() + within
    while True:
        text = recorded(path).decode().strip()
        if text:
            return int(text)
        assert time.monotonic() < deadline, f"no pid in {path}"
        time.sleep(0.02)


async def gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.05)
    return False
