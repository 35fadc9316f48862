"""`stet integrate claude-code --http PORT`: Claude Code's `http` hooks, answered by a running
`stet mcp --http PORT` with the same JSON as the command hooks (issue 23). The events are POSTed
as Claude Code POSTs them (tests/support/claudecode.py), the token through allowedEnvVars."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from support.capturetools import agent_repo, hunks
from support.claudecode import Claude, post_hook
from support.clitools import commit_all, stet

S1 = "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b"
S2 = "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2f1e"
FEEDBACK = "no: the limit stays at 10"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A repository set up with HTTP hooks, and `stet mcp --http PORT` running there."""
    root = agent_repo(tmp_path / "repo")
    port = free_port()
    p = stet("integrate", "claude-code", "--http", str(port), cwd=root)
    assert p.returncode == 0 and "STET_TOKEN" in p.stderr, p.stderr
    commit_all(root, "claude code set up")
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "stet", "mcp", "--http", f"127.0.0.1:{port}"],
        cwd=root,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.1)
    monkeypatch.setenv("STET_TOKEN", (root / ".stet" / "mcp-token").read_text().strip())
    yield root, port, proc
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def test_integrate_writes_http_hooks(served):
    root, port, _ = served
    conf = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]
    url = f"http://127.0.0.1:{port}/hooks/claude-code"
    hook = {
        "type": "http",
        "url": url,
        "headers": {"Authorization": "Bearer $STET_TOKEN"},
        "allowedEnvVars": ["STET_TOKEN"],
        "timeout": 10,
    }
    assert conf["PreToolUse"] == [{"matcher": "Edit|MultiEdit|Write|NotebookEdit", "hooks": [hook]}]
    assert conf["PostToolUse"] == [{"matcher": "Edit|MultiEdit|Write|NotebookEdit", "hooks": [hook]}]
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        assert conf[event] == [{"hooks": [hook]}]
    assert "STET_TOKEN" not in json.dumps(conf).replace("$STET_TOKEN", "").replace('["STET_TOKEN"]', "")
    assert os.environ["STET_TOKEN"] not in json.dumps(conf), "the token never goes into the file"
    # Command hooks added afterwards: both kinds would run, said.
    p = stet("integrate", "claude-code", cwd=root)
    assert p.returncode == 0 and "also has Stet's http hooks (PostToolUse, PreToolUse, SessionStart, Stop, " in p.stderr


def test_the_loop_over_http(served):
    root, _, _ = served
    claude = Claude(root, S1)
    assert claude.start() == {}
    assert claude.edit("a.py", "LIMIT = 10", "LIMIT = 20") == {}
    assert "waiting for review" in claude.stop()["systemMessage"]
    (h,) = hunks(root, "--task", f"claude-{S1}")
    assert h["turn"] == {"session": S1, "number": 1} and h["kept"]
    # The developer rejects from another process: the server's answers follow the store.
    assert stet("reject", h["id"], "--feedback", FEEDBACK, cwd=root).returncode == 0
    told = claude.prompt("go on")["hookSpecificOutput"]
    assert told["hookEventName"] == "UserPromptSubmit" and FEEDBACK in told["additionalContext"]
    assert claude.prompt("again") == {}, "told once"
    assert claude.edit("a.py", "LIMIT = 10", "LIMIT = 20") == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"The developer rejected this change to a.py: {FEEDBACK}",
        }
    }
    text = Claude(root, S2).start("resume")["hookSpecificOutput"]["additionalContext"]
    assert f"REJECTED a.py line 1: the developer said: {FEEDBACK}" in text


def test_http_hooks_refuse_without_the_token_and_never_block(served):
    root, _, proc = served
    claude = Claude(root, S1)
    (hook,) = claude.hooks["PreToolUse"]
    body = json.dumps(claude.payload("SessionStart", source="startup"))
    # Without the token (STET_TOKEN not allowed into the header): 401, nothing stored.
    before = sqlite3.connect(root / ".stet" / "stet.db").execute("SELECT COUNT(*) FROM oplog").fetchone()
    status, _ = post_hook({**hook, "allowedEnvVars": []}, body)
    assert status == 401
    # Broken input: a non-2xx with one line, which Claude Code takes as a non-blocking error.
    for raw in (b"not json", b"[]", json.dumps({"hook_event_name": "Stop"}).encode(), b"\xff"):
        status, text = post_hook(hook, raw)
        assert status == 500 and text.startswith("stet hook: ") and text.count("\n") == 1, (raw, status, text)
    after = sqlite3.connect(root / ".stet" / "stet.db").execute("SELECT COUNT(*) FROM oplog").fetchone()
    assert before == after
    # A session in another folder is not this review's: nothing to say.
    elsewhere = {**claude.payload("SessionStart", source="startup"), "cwd": str(root.parent)}
    assert post_hook(hook, json.dumps(elsewhere)) == (200, "")
    assert proc.poll() is None


def test_http_hooks_say_where_a_change_is_now(served):
    """A running `stet mcp --http` keeps the review in memory: a new session is told where its
    pending change is after another process's accept moved it, and after another tool changed
    the file with no Stet process looking since (issue 28: every answer true in every process)."""
    root, _, _ = served
    claude = Claude(root, S1)
    claude.start()
    assert claude.edit("a.py", '    print(shout("world"))\n', '    print(shout("stet"))\n') == {}
    claude.stop()
    (kept,) = hunks(root, "--task", f"claude-{S1}")
    assert kept["range"]["start"]["line"] == 12

    def told() -> str:
        return Claude(root, S2).start("resume")["hookSpecificOutput"]["additionalContext"]

    assert "pending review: a.py line 13" in told()
    patch = "--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n LIMIT = 10\n+BURST = 5\n"
    p = stet("propose", "--patch", "-", "--id", "burst", "--json", cwd=root, input=patch, env={"STET_RESIDENT": "off"})
    (burst,) = json.loads(p.stdout)["hunks"]
    assert stet("accept", burst["id"], cwd=root, env={"STET_RESIDENT": "off"}).returncode == 0
    assert "pending review: a.py line 14" in told()
    path = root / "a.py"
    path.write_text("# one\n# two\n" + path.read_text())  # another tool; no Stet process looks
    assert "pending review: a.py line 16" in told()
