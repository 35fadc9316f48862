"""Attacks on `stet mcp --http`'s hook route (`POST /hooks/claude-code`) by whoever holds the
token (any MCP client of the server): what it names is read only where Claude Code keeps it,
what it sends is bounded in size and in memory, and what it was told is told again when the
answer never reached it."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from support.capturetools import agent_repo, hunks
from support.claudecode import Claude, free_port, serve_http, stop_http
from support.clitools import commit_all, stet
from support.figures import FIGURES

S1 = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
S2 = "9f8e7d6c-5b4a-4392-8170-6e5d4c3b2a19"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """HTTP hooks, `stet mcp --http` running with Claude Code's folder at tmp/claude."""
    root = agent_repo(tmp_path / "repo")
    port = free_port()
    p = stet("integrate", "claude-code", "--http", str(port), "--stet", f"{sys.executable} -m stet", cwd=root)
    assert p.returncode == 0, p.stderr
    commit_all(root, "claude code set up")
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    proc = serve_http(root, port)
    monkeypatch.setenv("STET_TOKEN", (root / ".stet" / "mcp-token").read_text().strip())
    yield root, port, proc, config / "projects" / str(root).replace("/", "-")
    stop_http(proc)


def _transcript(path: Path, prompt: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"type": "user", "message": {"role": "user", "content": prompt}}
    path.write_text(json.dumps(entry) + "\n")
    return str(path)


def test_a_transcript_is_read_only_where_claude_code_keeps_it(served, tmp_path):
    """A Stop naming any file as its transcript put that file's last "prompt" into the hunks'
    message, which every MCP client with the token reads."""
    root, _, proc, project = served
    secret = _transcript(tmp_path / "private" / f"{S1}.jsonl", "the password is hunter2")
    claude = Claude(root, S1, transcript=secret)
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    (h,) = hunks(root, "--task", f"claude-{S1}")
    assert h["message"] == "claude-code", "a file outside Claude Code's folder is not read"
    # Claude Code's own transcript of the session is read.
    own = _transcript(project / f"{S2}.jsonl", "raise the burst")
    claude = Claude(root, S2, transcript=own)
    claude.edit("a.py", "LIMIT = 20", "LIMIT = 30")
    claude.stop()
    (h,) = hunks(root, "--task", f"claude-{S2}")
    assert h["message"] == "claude-code: raise the burst"
    assert proc.poll() is None


# --- bodies bounded in size, pace and memory ---------------------------------------------
HOOK_LIMIT = 64 << 20


def _status(sock: socket.socket, deadline: float = 120) -> tuple[int, bytes]:
    """The status and body of the response on `sock` (read until the server closes or the
    body's Content-Length is in)."""
    sock.settimeout(deadline)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), data[:200]
    length = next(
        (int(v) for k, v in (h.split(b":", 1) for h in head.split(b"\r\n")[1:]) if k.lower() == b"content-length"), 0
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(head.split()[1]), body


def _request(port: int, length: int | None, *, chunked: bool = False, expect: bool = False) -> socket.socket:
    """A POST to the hook route with the token, headers only: the body is the caller's to send.
    `expect`: with `Expect: 100-continue`, sent once the route asks for the body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    head = ["POST /hooks/claude-code HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json"]
    head.append(f"Authorization: Bearer {os.environ['STET_TOKEN']}")
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {length}")
    head += ["Expect: 100-continue"] if expect else []
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    return sock


def _memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (the peak) of a process, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {k: int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM")}


def test_a_body_over_the_limit_is_413_before_it_is_read(served):
    root, port, proc, _ = served
    sock = _request(port, HOOK_LIMIT + 1)  # says it is larger: answered at once, nothing read
    status, body = _status(sock, 60)
    sock.close()
    assert status == 413 and b"TooLarge" in body, body
    # Chunked, saying nothing: refused once the limit is passed.
    sock = _request(port, None, chunked=True)
    piece = b"a" * (1 << 20)
    try:
        for _ in range(HOOK_LIMIT // len(piece) + 2):
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
    except OSError:
        pass  # the server answered and closed: the rest is not read
    status, body = _status(sock, 60)
    sock.close()
    assert status == 413 and b"TooLarge" in body, body
    assert proc.poll() is None
    assert Claude(root, S1).prompt("still there?") == {}


def test_ten_concurrent_60_mb_hooks_keep_the_server_small(served):
    """Ten concurrent 60 MB hook events took the server from 73 MB to 1.6 GB: now they pass one
    at a time (a budget of bytes held at once), each answered, the server's peak bounded."""
    root, port, proc, _ = served
    assert Claude(root, S1).prompt("warm up") == {}  # the review open, the route's code loaded
    before = _memory(proc.pid)
    event = {"session_id": S1, "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": "Read"}
    body = json.dumps({**event, "tool_response": {"content": "x" * (60 << 20)}}).encode()
    statuses: list[int] = []

    def one() -> None:
        sock = _request(port, len(body))
        try:
            sock.sendall(body)
            statuses.append(_status(sock, 300)[0])
        except OSError as exc:
            statuses.append(-1)
            raise AssertionError(f"the connection failed: {exc}") from None
        finally:
            sock.close()

    threads = [threading.Thread(target=one) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    after = _memory(proc.pid)
    FIGURES["HTTP hooks, 10 concurrent 60 MB bodies"] = (
        f"server RSS {before['VmRSS']} MB before, peak {after['VmHWM']} MB (answers: "
        + ", ".join(f"{statuses.count(s)}x {s}" for s in sorted(set(statuses)))
        + ")"
    )
    print(FIGURES["HTTP hooks, 10 concurrent 60 MB bodies"])
    assert len(statuses) == 10 and set(statuses) <= {200, 503}, statuses  # answered, or told to come back
    assert 200 in statuses
    assert after["VmHWM"] - before["VmRSS"] < 450, (before, after)  # 10 x 60 MB would be 600 MB of bodies alone
    assert proc.poll() is None
    assert Claude(root, S1).prompt("still there?") == {}


def test_a_large_body_held_back_never_stops_small_hooks(served):
    """A client that says 64 MiB and sends nothing holds that share of the budget: a second such
    request waits its turn and is told to come back (503), the small hooks go on, and a body that
    does not come in time is refused (408)."""
    root, port, proc, _ = served
    claude = Claude(root, S1)
    held = _request(port, HOOK_LIMIT)
    held.sendall(b'{"session_id": ')
    second = _request(port, HOOK_LIMIT - 1)
    started = time.monotonic()
    assert claude.prompt("a small hook meanwhile") == {}
    assert time.monotonic() - started < 8, "a small hook does not wait for the large ones"
    status, body = _status(second, 120)
    assert status == 503 and b"busy" in body, (status, body)
    second.close()
    held.close()
    slow = _request(port, 1000)
    slow.sendall(b'{"session_id": "')
    status, body = _status(slow, 120)
    slow.close()
    assert status == 408, (status, body)
    assert proc.poll() is None
    assert claude.prompt("still there?") == {}


# --- an answer that never reached the agent is told again ---------------------------------
def test_a_prompt_answer_the_client_never_got_is_told_at_the_next_prompt(served):
    """uvicorn drops an answer to a client that left without a word: what it told was recorded
    as told, and the next prompt said nothing."""
    root, port, proc, _ = served
    claude = Claude(root, S1)
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    (h,) = hunks(root, "--task", f"claude-{S1}")
    assert stet("reject", h["id"], "--feedback", "keep ten", cwd=root).returncode == 0
    body = json.dumps(claude.payload("UserPromptSubmit", prompt="go on")).encode()
    sock = _request(port, len(body), expect=True)
    assert _status(sock, 60) == (100, b""), "the route reads the body"
    sock.sendall(body)
    sock.shutdown(socket.SHUT_WR)  # gone before the answer (Claude Code's timeout, a dropped connection)
    assert sock.recv(65536) == b"", "the server closes the connection it sees gone, answering nothing"
    sock.close()
    deadline = time.monotonic() + 60
    told = {}
    while not told and time.monotonic() < deadline:  # the server may still be answering the dropped one
        time.sleep(0.2)
        told = claude.prompt("again")
    assert "keep ten" in told["hookSpecificOutput"]["additionalContext"], told
    assert claude.prompt("and again") == {}, "told once it was delivered"
    assert proc.poll() is None
