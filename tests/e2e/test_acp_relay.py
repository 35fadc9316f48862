"""`stet acp -- AGENT`: the transparent relay between an editor (here a raw scripted client) and an
ACP agent (tests/support/acp_fake_agent.py), run for real as processes. Every byte passes through
unchanged both ways; lines that are not JSON, or longer than the bound, too; a slow side never
blocks the other; the agent's crash, the editor's disconnection and a signal end it cleanly."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from stet.acp import relay
from stet.acp.message import FORWARD, Message, Reply, Rewrite, Verdict
from stet.acp.wire import LINE_BOUND, encode
from support.acp_raw import AGENT, Client, recorded, start, stderr_of
from support.acp_raw import gone as _gone


async def _session(client: Client, tmp_path: Path, version: int = 1) -> str:
    rid = await client.request(
        "initialize",
        {"protocolVersion": version, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}},
    )
    answer = await client.answer_of(rid)
    assert "result" in answer, answer
    rid = await client.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
    return str((await client.answer_of(rid))["result"]["sessionId"])


async def test_every_byte_passes_unchanged_both_ways_for_a_whole_session(tmp_path):
    received, sent = tmp_path / "received", tmp_path / "sent"
    client = await start(tmp_path, "--received", str(received), "--sent", str(sent))
    # The editor's own style: spaces, escapes, key order, unknown fields, a CRLF line end.
    await client.write(
        b'{ "params" : {"protocolVersion":1, "clientCapabilities": {"fs": {"readTextFile": true, '
        b'"writeTextFile": true}, "terminal": false}, "clientInfo": {"name": "\\u00e9diteur", "x-extra": [1, 2.50, null]}},'
        b' "method": "initialize", "id": 0, "jsonrpc": "2.0"}\r\n'
    )
    init = await client.answer_of(0)
    assert init["result"]["protocolVersion"] == 1
    rid = await client.request(
        "session/new", {"cwd": str(tmp_path), "mcpServers": []}, rid="new-1", separators=(" , ", " :  ")
    )
    session = (await client.answer_of(rid))["result"]["sessionId"]
    steps = "update diff write permission sid-permission sid-write crlf update"
    prompt = [{"type": "text", "text": steps}, {"type": "resource_link", "uri": "file:///x", "name": "x"}]
    seen: list = []
    rid = await client.request("session/prompt", {"sessionId": session, "prompt": prompt}, ensure_ascii=False)
    answers = {
        "fs/write_text_file": None,
        "session/request_permission": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }
    done = await client.answer_of(rid, answers, seen)
    assert done["result"] == {"stopReason": "end_turn"}
    reported = [
        m["params"]["update"]["content"]["text"]
        for m in seen
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert reported[0] == "héllo — wörld ✓"
    assert reported[3].startswith('answer "agent-3": {"id": "agent-3"'), reported  # a string id, as it was
    await client.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
    await client.close()
    assert await client.exit_code() == 0
    assert recorded(received) == bytes(client.sent)
    assert recorded(sent) == bytes(client.got)
    assert b"\r\n" in client.got  # the agent's CRLF line came through as it was
    assert "stet acp:" not in await stderr_of(client)


async def test_lines_that_are_not_json_or_over_the_bound_pass_untouched(tmp_path):
    received, sent = tmp_path / "received", tmp_path / "sent"
    client = await start(tmp_path, "--received", str(received), "--sent", str(sent))
    session = await _session(client, tmp_path)
    await client.write(b"not json at all \xff\xfe\n")
    await client.write(b"[1, 2, 3]\n")
    huge = b'{"jsonrpc": "2.0", "method": "x", "params": "' + b"y" * LINE_BOUND + b'"}\n'
    await client.write(huge)
    rid = await client.request(
        "session/prompt",
        {"sessionId": session, "prompt": [{"type": "text", "text": f"nonjson huge:{LINE_BOUND + 5} update"}]},
    )
    assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
    await client.close()
    assert await client.exit_code() == 0
    assert recorded(received) == bytes(client.sent)
    assert recorded(sent) == bytes(client.got)
    log = await stderr_of(client)
    assert log.count("not a JSON object") == 1, log  # once per kind, whichever side
    assert log.count("longer than") == 1, log
    assert all(line.startswith("stet acp:") for line in log.splitlines()), log


async def test_a_slow_agent_never_blocks_the_other_direction(tmp_path):
    client = await start(tmp_path)
    session = await _session(client, tmp_path)
    rid = await client.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "ticks:5"}]}
    )
    # While the agent reads nothing, the editor sends far more than the pipes hold.
    flood = [{"jsonrpc": "2.0", "method": "_flood", "params": {"n": i, "pad": "z" * 65536}} for i in range(128)]

    async def send_flood() -> None:
        for body in flood:
            await client.send(body)

    flooding = asyncio.create_task(send_flood())
    ticks = 0
    while ticks < 5:
        msg = json.loads(await client.line())
        if msg.get("method") == "session/update":
            ticks += 1
            assert ticks == 5 or not flooding.done()
    assert not flooding.done()  # still blocked by the agent: yet its updates came through
    assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
    await asyncio.wait_for(flooding, 30)
    await client.close()
    assert await client.exit_code() == 0


async def test_the_agent_crashing_mid_prompt_answers_the_editor_and_ends(tmp_path):
    client = await start(tmp_path)
    session = await _session(client, tmp_path)
    seen: list = []
    rid = await client.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "update crash"}]}
    )
    answer = await client.answer_of(rid, seen=seen)
    assert answer["error"]["code"] == -32603
    assert "the agent exited (code 3)" in answer["error"]["message"]
    assert any(m.get("method") == "session/update" for m in seen)  # what it said before is delivered
    assert await client.exit_code() == 3


@pytest.mark.parametrize("stubborn", [False, True], ids=["agent-stops", "agent-ignores-sigterm"])
async def test_the_editor_disconnecting_mid_prompt_stops_the_agent(tmp_path, stubborn):
    pidfile = tmp_path / "pid"
    extra = ["--ignore-eof", "--ignore-term"] if stubborn else []
    client = await start(tmp_path, "--pidfile", str(pidfile), *extra)
    session = await _session(client, tmp_path)
    await client.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "slow:120"}]})
    pid = int(pidfile.read_text())
    await client.close()
    await asyncio.wait_for(client.proc.wait(), 30)
    assert await _gone(pid, 5), "the agent was left running"


# A launcher as npx and Codex's ACP adapter's node script are: the agent its child, holding the
# inherited pipes; SIGTERM ends the launcher at once and leaves the child.
LAUNCHER = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"]


@pytest.mark.parametrize("stubborn", [False, True], ids=["agent-stops", "agent-ignores-sigterm"])
async def test_an_agent_behind_a_launcher_is_stopped_with_what_it_started(tmp_path, stubborn):
    """The editor gone, an agent that ignores its stdin's end and runs behind a launcher (the real
    Codex ACP adapter's way) is stopped with its launcher: nothing it started is left running."""
    pidfile = tmp_path / "pid"
    extra = ["--ignore-term"] if stubborn else []
    client = await start(tmp_path, "--pidfile", str(pidfile), "--ignore-eof", *extra, agent=[*LAUNCHER, *AGENT])
    await _session(client, tmp_path)
    pid = int(pidfile.read_text())
    await client.close()
    await asyncio.wait_for(client.proc.wait(), 30)
    assert await _gone(pid, 5), "the agent was left running"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
async def test_a_signal_to_stet_is_passed_to_the_agent_and_the_editor_answered(tmp_path, sig):
    pidfile = tmp_path / "pid"
    client = await start(tmp_path, "--pidfile", str(pidfile))
    session = await _session(client, tmp_path)
    rid = await client.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "slow:120"}]}
    )
    client.proc.send_signal(sig)
    answer = await client.answer_of(rid)
    assert answer["error"]["code"] == -32603 and "the agent exited" in answer["error"]["message"]
    assert await client.exit_code() == 128 + sig
    assert await _gone(int(pidfile.read_text()), 5)


@pytest.mark.parametrize(("offered", "own", "agreed"), [(1, 1, 1), (1, 2, 1), (2, 2, 2), (2, 1, 1)])
async def test_the_protocol_version_the_peers_agree_passes_unchanged(tmp_path, offered, own, agreed):
    sent = tmp_path / "sent"
    client = await start(tmp_path, "--version", str(own), "--sent", str(sent))
    rid = await client.request("initialize", {"protocolVersion": offered, "clientCapabilities": {}})
    answer = await client.answer_of(rid)
    assert answer["result"]["protocolVersion"] == agreed
    await client.close()
    assert await client.exit_code() == 0
    assert recorded(sent) == bytes(client.got)


@pytest.mark.parametrize("why", ["not found", "Permission denied"])
async def test_a_missing_agent_is_said_and_the_editor_answered(tmp_path, why):
    if why != "not found":
        (tmp_path / "no-such-agent").write_text("#!/bin/sh\n")  # there, but not executable
    client = await start(tmp_path, agent=[str(tmp_path / "no-such-agent")])
    rid = await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    answer = await client.answer_of(rid)
    assert answer["error"]["code"] == -32603 and "no-such-agent" in answer["error"]["message"]
    await client.close()
    assert await client.exit_code() == 127
    log = await stderr_of(client)
    assert "stet acp:" in log and "no-such-agent" in log and why in log, log


async def test_no_agent_command_is_a_usage_error(tmp_path):
    client = await start(tmp_path, agent=[])
    await client.close()
    assert await client.exit_code() == 2
    assert client.got == b""
    assert "AGENT" in await stderr_of(client)


# The relay in this process, with a part of the test's own: the verdicts applied, requests paired.


class _Ends:
    """The editor's ends of the relay's stdin and stdout pipes, as Client expects a process."""

    def __init__(self, task: asyncio.Task, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.task, self.stdout, self.stdin = task, reader, writer

    async def wait(self) -> int:
        return await self.task


async def relayed(part, tmp_path: Path, *agent_args: str) -> tuple[Client, io.StringIO]:
    editor_reads, relay_writes = os.pipe()
    relay_reads, editor_writes = os.pipe()
    log = io.StringIO()
    task = asyncio.create_task(
        relay.run(
            [*AGENT, *agent_args],
            part,
            stdin=os.fdopen(relay_reads, "rb", buffering=0),
            stdout=os.fdopen(relay_writes, "wb", buffering=0),
            cwd=str(tmp_path),
            env=os.environ,
            stderr=log,
            grace=2,
        )
    )
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(editor_reads, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(editor_writes, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return Client(_Ends(task, reader, writer)), log  # type: ignore[arg-type]


class Scripted:
    """A part: prompts get a block added, `_stet/ask` is answered by Stet, the agent's permission
    requests are refused for the developer, an agent's text that says `boom` makes it fail."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, object, object]] = []  # (side, response id, the request's method)
        self.hold: asyncio.Event | None = None

    async def from_editor(self, msg: Message, asked: Message | None) -> Verdict:
        if msg.is_response:
            self.pairs.append(("editor", msg.body["id"], asked.method if asked else None))
        if msg.method == "session/prompt":
            body = json.loads(msg.raw)
            body["params"]["prompt"].append({"type": "text", "text": "told: «rejected»"})
            return Rewrite(body)
        if msg.method == "_stet/ask":
            return Reply({"jsonrpc": "2.0", "id": msg.body["id"], "result": {"answeredBy": "stet"}})
        return FORWARD

    async def from_agent(self, msg: Message, asked: Message | None) -> Verdict:
        if msg.is_response:
            self.pairs.append(("agent", msg.body["id"], asked.method if asked else None))
        if msg.method == "session/request_permission":
            outcome = {"outcome": "selected", "optionId": "reject"}
            return Reply({"jsonrpc": "2.0", "id": msg.body["id"], "result": {"outcome": outcome}})
        if msg.method == "session/update" and "héllo" in msg.raw.decode():
            if self.hold is not None:
                await self.hold.wait()
            raise ValueError("boom")
        return FORWARD

    async def close(self) -> None:
        self.closed = True


async def test_the_parts_verdicts_are_applied_and_responses_paired_per_direction(tmp_path):
    received = tmp_path / "received"
    part = Scripted()
    client, log = await relayed(part, tmp_path, "--received", str(received))
    session = await _session(client, tmp_path)  # the editor's ids 1, 2
    rid = await client.request("_stet/ask", {}, rid="q")
    assert (await client.answer_of(rid)) == {"jsonrpc": "2.0", "id": "q", "result": {"answeredBy": "stet"}}
    seen: list = []
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "update write permission update"}]}
    rid = await client.request("session/prompt", prompt)
    assert (await client.answer_of(rid, {"fs/write_text_file": None}, seen))["result"] == {"stopReason": "end_turn"}
    # The agent's id 1 (its write) and the editor's id 1 (initialize) are different requests.
    assert ("agent", 1, "initialize") in part.pairs and ("editor", 1, "fs/write_text_file") in part.pairs
    assert ("agent", 2, "session/new") in part.pairs
    methods = [m.get("method") for m in seen]
    assert "session/request_permission" not in methods  # answered by the part, never seen by the editor
    texts = [m["params"]["update"]["content"].get("text", "") for m in seen if m.get("method") == "session/update"]
    assert any('"optionId": "reject"' in t for t in texts), texts  # the agent got the part's answer
    assert sum("héllo" in t for t in texts) == 2  # the part failed on them: passed through
    await client.close()
    assert await client.exit_code() == 0
    got = recorded(received)
    assert b"_stet/ask" not in got
    rewritten = dict(
        json.loads(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": prompt}))
    )
    rewritten["params"]["prompt"] = [*prompt["prompt"], {"type": "text", "text": "told: «rejected»"}]
    assert encode(rewritten) in got  # the rewrite, compact and UTF-8, as the agent read it
    assert log.getvalue().count("Stet's part failed") == 1, log.getvalue()
    assert part.closed


async def test_a_slow_part_on_one_direction_never_blocks_the_other(tmp_path):
    received = tmp_path / "received"
    part = Scripted()
    part.hold = asyncio.Event()
    client, _ = await relayed(part, tmp_path, "--received", str(received))
    session = await _session(client, tmp_path)
    rid = await client.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "update"}]})
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
    await client.send(cancel)
    deadline = time.monotonic() + 20
    while json.dumps(cancel).encode() not in recorded(received):  # through, while the part holds the agent's side
        assert time.monotonic() < deadline, "the editor's message waited for the agent's side"
        await asyncio.sleep(0.02)
    part.hold.set()
    assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
    await client.close()
    assert await client.exit_code() == 0


@pytest.mark.parametrize("sh", ["missing", "not-executable"])
async def test_without_a_reaper_the_relay_runs_as_before(tmp_path, monkeypatch, sh):
    """No sh to watch the agent with (a system without one, or one that cannot run): the session
    runs and ends as it did before the reaper; one that failed to start is said once."""
    path = tmp_path / "sh"
    if sh == "not-executable":
        path.write_text("#!/bin/sh\n")
    monkeypatch.setattr(relay, "SH", str(path))
    client, log = await relayed(relay.PassThrough(), tmp_path)
    await _session(client, tmp_path)
    await client.close()
    assert await client.exit_code() == 0
    said = log.getvalue()
    assert said.count("will not be stopped if stet is killed") == (sh == "not-executable"), said
