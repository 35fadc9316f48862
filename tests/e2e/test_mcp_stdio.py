"""`stet mcp` on stdio as an agent starts it: `initialize` answered before the MCP SDK has
loaded (the agent waits for it), the answer the SDK would give, and Ctrl-C / SIGTERM honoured
(the store closed, exit 130) instead of ignored until the agent kills the server."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from stet.mcp import handshake
from stet.mcp.server import build
from support.clitools import stet_json

DEADLINE = 60.0  # seconds; the SDK alone may take several on a busy machine


def start(ws: Path, *args: str, env: dict | None = None) -> subprocess.Popen[bytes]:
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    return subprocess.Popen(
        [sys.executable, "-m", "stet", "mcp", *args],
        cwd=ws,
        env={**full, **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def send(p: subprocess.Popen[bytes], message: dict | bytes) -> None:
    assert p.stdin is not None
    p.stdin.write(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
    p.stdin.flush()


def receive(p: subprocess.Popen[bytes], within: float = DEADLINE) -> dict:
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], within)
    assert ready, f"no answer within {within} s"
    line = p.stdout.readline()
    assert line, f"stet mcp ended: {p.stderr.read().decode() if p.stderr else ''}"
    return json.loads(line)


def call(p: subprocess.Popen[bytes], request_id: int, tool: str, **arguments: object) -> None:
    send(
        p,
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
    )


def initialize(version: str = "2025-06-18", request_id: object = 1) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    }


def handshake_then(p: subprocess.Popen[bytes]) -> None:
    """The whole handshake, then one request the SDK itself must answer."""
    send(p, initialize())
    assert receive(p)["result"] == handshake.result("2025-06-18")
    send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert len(receive(p)["result"]["tools"]) > 5


def wait_exit(p: subprocess.Popen[bytes], within: float = DEADLINE) -> int:
    try:
        return p.wait(within)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail(f"stet mcp still running {within} s later")


def test_initialize_is_answered_while_the_sdk_is_still_loading(ws):
    # The SDK held for two minutes: the answer can only come from the front (mcp/stdio.py).
    p = start(ws, env={"STET_FAULT": "mcp:before-sdk~120"})
    try:
        send(p, initialize())
        assert receive(p, within=DEADLINE) == {"jsonrpc": "2.0", "id": 1, "result": handshake.result("2025-06-18")}
        # Answered without the SDK: its validation library is not even loaded in the process.
        assert "pydantic_core" not in Path(f"/proc/{p.pid}/maps").read_text()
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize(
    "version, request_id",
    [(v, 7) for v in HANDSHAKE_PROTOCOL_VERSIONS] + [("1999-01-01", "seven"), ("2026-07-28", 0)],
)
def test_the_early_answer_is_the_one_the_sdk_gives(ws, version, request_id):
    p = start(ws)
    send(p, initialize(version, request_id))
    early = receive(p)
    assert early == {"jsonrpc": "2.0", "id": request_id, "result": handshake.result(version)}
    send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(p, {"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    assert receive(p)["id"] == "list"  # the SDK's own answer to initialize was not passed on
    assert p.stdin is not None
    p.stdin.close()
    assert wait_exit(p) == 0
    err = p.stderr.read().decode() if p.stderr else ""
    assert "differently" not in err, err  # the front compares its answer with the SDK's


def test_the_handshake_module_says_what_the_sdk_says(tmp_path):
    # The capabilities as they reach the wire: test_the_early_answer_is_the_one_the_sdk_gives.
    assert handshake.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    options = build(str(tmp_path / "stet.db"), [str(tmp_path)])._lowlevel_server.create_initialization_options()
    assert (options.server_name, options.instructions) == (handshake.SERVER_NAME, handshake.INSTRUCTIONS)


def test_a_malformed_initialize_is_answered_by_the_sdk_alone(ws):
    p = start(ws)
    try:
        bad = initialize()
        del bad["params"]["clientInfo"]
        send(p, bad)
        answer = receive(p)
        assert answer["id"] == 1 and "error" in answer and "result" not in answer
        send(p, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert receive(p)["id"] == 2  # one answer to the bad initialize, then the next one
    finally:
        p.kill()
        p.wait()


def test_ctrl_c_ends_it_with_the_store_closed_and_the_work_kept(ws):
    p = start(ws)
    handshake_then(p)
    call(p, 3, "start_task", title="Kept", goal="g", task_id="kept")
    assert receive(p)["id"] == 3
    p.send_signal(signal.SIGINT)
    assert wait_exit(p) == 130
    err = p.stderr.read().decode() if p.stderr else ""
    assert "Traceback" not in err, err
    assert [t["id"] for t in stet_json("task", "list", "--json", cwd=ws)["tasks"]] == ["kept"]


def test_sigterm_during_a_wait_for_decisions_ends_it(ws):
    p = start(ws)
    handshake_then(p)
    call(p, 3, "start_task", title="W", goal="g", task_id="w")
    receive(p)
    edits = [{"path": "b.txt", "old_text": "beta\n", "new_text": "BETA\n"}]
    call(p, 4, "propose_edits", task_id="w", edits=edits)
    proposal = receive(p)["result"]["structuredContent"]["proposalId"]
    call(p, 5, "wait_for_decisions", proposal_id=proposal, timeout_seconds=600)
    time.sleep(0.5)  # the wait has started (nothing to poll for: it waits for a decision that never comes)
    p.send_signal(signal.SIGTERM)
    assert wait_exit(p) == 130


def test_ctrl_c_before_the_sdk_has_loaded_ends_it_at_once(ws):
    p = start(ws, env={"STET_FAULT": "mcp:before-sdk~120"})
    send(p, initialize())
    receive(p)
    p.send_signal(signal.SIGINT)
    assert wait_exit(p) == 130


def test_a_message_longer_than_the_limit_is_dropped_and_the_server_goes_on(ws):
    from stet import limits

    p = start(ws)
    handshake_then(p)
    send(p, b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"x": "' + b"a" * limits.MCP_MESSAGE + b'"}}\n')
    send(p, {"jsonrpc": "2.0", "id": 10, "method": "ping"})
    answers = [receive(p)]
    if answers[0].get("id") != 10:  # the SDK may answer the unreadable line first
        answers.append(receive(p))
    assert answers[-1]["id"] == 10 and all(a.get("id") != 9 for a in answers)
    p.kill()
    p.wait()
