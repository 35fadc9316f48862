"""`stet mcp --http`: the official MCP client over streamable HTTP on loopback, with the bearer
token; a request without it, or with another, is answered 401 and stores nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from support.clitools import db_summary, make_repo
from support.workers import call

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stet", "mcp", "--http", f"127.0.0.1:{self.port}", "--agent", "remote"],
            cwd=root,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert self.proc.poll() is None, self.proc.stderr.read()
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.1)
        self.token = (root / ".stet" / "mcp-token").read_text().strip()

    def stop(self, sig=signal.SIGTERM) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(30)


def post(url: str, body: dict, token: str | None) -> tuple[int, str]:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@asynccontextmanager
async def client(server: HttpServer, token: str):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with streamable_http_client(server.url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


@pytest.fixture
def server(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "b.txt").write_text("alpha\nbeta\ngamma\n")
    s = HttpServer(root)
    yield s
    if s.proc.poll() is None:
        s.stop()


async def test_token_is_required_on_every_request_and_nothing_is_stored_without_it(server):
    token_file = server.root / ".stet" / "mcp-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(server.token) >= 32
    db = server.root / ".stet" / "stet.db"
    stored = db_summary(db)
    call_tool = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "start_task", "arguments": {"title": "x", "goal": "y", "task_id": "evil"}},
    }
    for token in (None, "", "wrong", server.token + "x", server.token[:-1]):
        for body in (INIT, call_tool):
            status, text = post(server.url, body, token)
            assert status == 401 and "unauthorized" in text, (token, status, text)
    status, _ = post(f"http://127.0.0.1:{server.port}/other", INIT, None)
    assert status == 401
    assert db_summary(db) == stored, "nothing stored"
    # A client with a wrong token cannot even start a session.
    with pytest.raises(ExceptionGroup) as refused:  # the SDK's task groups carry its error out
        async with client(server, "wrong"):
            raise AssertionError("a session started with a wrong token")
    assert refused.value.subgroup(AssertionError) is None and "error response" in repr(refused.value)
    assert db_summary(db) == stored


async def test_the_same_tools_and_idempotency_as_stdio(server):
    async with client(server, server.token) as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert {"start_task", "propose_edits", "propose_patch", "review_status", "get_task_context"} <= names
        error, _, data = await call(mcp, "start_task", title="Remote", goal="BETA", task_id="r1", request_id="q1")
        assert not error and data["task"]["agent"] == "remote"
        edits = [{"path": "b.txt", "old_text": "beta\n", "new_text": "BETA\n"}]
        error, _, first = await call(mcp, "propose_edits", task_id="r1", edits=edits, proposal_id="p1")
        assert not error and len(first["hunks"]) == 1
        stored = db_summary(server.root / ".stet" / "stet.db")
        # The same call again (a retry after a timeout): the same answer, nothing new.
        error, _, again = await call(mcp, "propose_edits", task_id="r1", edits=edits, proposal_id="p1")
        assert not error and [h["id"] for h in again["hunks"]] == [h["id"] for h in first["hunks"]]
        error, _, _ = await call(mcp, "start_task", title="Remote", goal="BETA", task_id="r1", request_id="q1")
        assert not error
        assert db_summary(server.root / ".stet" / "stet.db") == stored
    assert (server.root / "b.txt").read_text() == "alpha\nbeta\ngamma\n", "proposing writes nothing"

    # Killed after an acknowledged proposal: a new server shows it, the token is the same.
    server.stop(signal.SIGKILL)
    second = HttpServer(server.root)
    try:
        assert second.token == server.token
        async with client(second, second.token) as mcp:
            error, _, data = await call(mcp, "review_status", task_id="r1")
            assert not error and [h["id"] for h in data["hunks"]["pending"]] == [first["hunks"][0]["id"]]
    finally:
        second.stop()
