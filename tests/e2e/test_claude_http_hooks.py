"""`stet integrate claude-code --http PORT`: Claude Code's `http` hooks, answered by a running
`stet mcp --http PORT` with the same JSON as the command hooks. The events are POSTed
as Claude Code POSTs them (tests/support/claudecode.py), the token through allowedEnvVars."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import sys

import pytest

from support.capturetools import agent_repo, hunks
from support.claudecode import Claude, free_port, post_hook, serve_http, stop_http
from support.clitools import commit_all, stet

S1 = "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b"
S2 = "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2f1e"
FEEDBACK = "no: the limit stays at 10"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A repository set up with HTTP hooks, and `stet mcp --http PORT` running there."""
    root = agent_repo(tmp_path / "repo")
    port = free_port()
    p = stet("integrate", "claude-code", "--http", str(port), "--stet", f"{sys.executable} -m stet", cwd=root)
    assert p.returncode == 0 and "STET_TOKEN" in p.stderr, p.stderr
    commit_all(root, "claude code set up")
    proc = serve_http(root, port)
    monkeypatch.setenv("STET_TOKEN", (root / ".stet" / "mcp-token").read_text().strip())
    yield root, port, proc
    stop_http(proc)


def _hook_settings(port: int) -> dict:
    return {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/hooks/claude-code",
        "headers": {"Authorization": "Bearer $STET_TOKEN"},
        "allowedEnvVars": ["STET_TOKEN"],
        "timeout": 10,
    }


STET_COMMAND = f"{shlex.quote(sys.executable)} -m stet hook claude-code"


def test_integrate_writes_http_hooks(served):
    root, port, _ = served
    conf = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]
    hook = _hook_settings(port)
    assert conf["PreToolUse"] == [{"matcher": "Edit|MultiEdit|Write|NotebookEdit", "hooks": [hook]}]
    assert conf["PostToolUse"] == [{"matcher": "Edit|MultiEdit|Write|NotebookEdit", "hooks": [hook]}]
    for event in ("UserPromptSubmit", "Stop"):
        assert conf[event] == [{"hooks": [hook]}]
    # Claude Code runs no HTTP hook for SessionStart: that one stays a command.
    assert conf["SessionStart"] == [{"hooks": [{"type": "command", "command": STET_COMMAND}]}]
    assert "STET_TOKEN" not in json.dumps(conf).replace("$STET_TOKEN", "").replace('["STET_TOKEN"]', "")
    assert os.environ["STET_TOKEN"] not in json.dumps(conf), "the token never goes into the file"


def test_integrate_replaces_stets_hooks_of_the_other_kind_and_keeps_the_users(tmp_path):
    """`integrate --http` after `integrate` puts the HTTP hooks in place of Stet's command hooks
    (not both: each event would run twice), `integrate` after `integrate --http` the other way
    round; the developer's own hooks, in Stet's entries or their own, stay exactly as they are."""
    root = agent_repo(tmp_path / "repo")
    mine = {"type": "command", "command": "echo mine"}
    theirs = {"type": "http", "url": "http://127.0.0.1:9/theirs"}
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [mine]}], "PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}})
    )
    assert stet("integrate", "claude-code", "--stet", f"{sys.executable} -m stet", cwd=root).returncode == 0
    conf = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]
    conf["Stop"][0]["hooks"].append(mine | {"command": "echo mine too"})  # the developer's, beside Stet's
    conf["Stop"][1]["hooks"].append(mine | {"command": "echo beside stet"})
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": conf}))
    command = {"type": "command", "command": STET_COMMAND}

    def stets(hooks: dict) -> dict:
        found: dict = {}
        for event, entries in hooks.items():
            for e in entries:
                for h in e["hooks"]:
                    if h.get("url", "").endswith("/hooks/claude-code") or h.get("command", "").endswith("claude-code"):
                        found.setdefault(event, []).append(h)
        return found

    for _ in range(2):  # there and back, twice
        p = stet("integrate", "claude-code", "--http", "8766", "--stet", f"{sys.executable} -m stet", cwd=root)
        assert p.returncode == 0, p.stderr
        assert "hooks.Stop (Stet's http hook in place of its command hook)" in p.stdout, p.stdout
        assert "also has" not in p.stderr
        now = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]
        http = _hook_settings(8766)
        assert stets(now) == {
            "SessionStart": [command],
            "UserPromptSubmit": [http],
            "PreToolUse": [http],
            "PostToolUse": [http],
            "Stop": [http],
        }
        assert now["Stop"] == [
            {"hooks": [mine, mine | {"command": "echo mine too"}]},
            {"hooks": [http, mine | {"command": "echo beside stet"}]},
        ]
        assert now["PreToolUse"][0] == {"matcher": "Bash", "hooks": [theirs]}
        p = stet("integrate", "claude-code", "--stet", f"{sys.executable} -m stet", cwd=root)
        assert p.returncode == 0 and "hooks.PreToolUse (Stet's command hook in place of its http hook)" in p.stdout
        back = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]
        assert stets(back) == {event: [command] for event in stets(now)}
        assert back["Stop"][1] == {"hooks": [command, mine | {"command": "echo beside stet"}]}
        assert back["PreToolUse"][0] == {"matcher": "Bash", "hooks": [theirs]}
    # Run again as it is: nothing changes.
    before = (root / ".claude" / "settings.json").read_bytes()
    p = stet("integrate", "claude-code", "--stet", f"{sys.executable} -m stet", cwd=root)
    assert p.returncode == 0 and "already set up" in p.stdout
    assert (root / ".claude" / "settings.json").read_bytes() == before


def test_a_new_session_is_told_with_http_hooks(served):
    """Claude Code never POSTs SessionStart: the command hook `integrate --http` keeps for it
    tells the new session the open review."""
    root, _, _ = served
    claude = Claude(root, S1)
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    (h,) = hunks(root, "--task", f"claude-{S1}")
    assert stet("reject", h["id"], "--feedback", FEEDBACK, cwd=root).returncode == 0
    told = Claude(root, S2).start("startup")["hookSpecificOutput"]
    assert (
        told["hookEventName"] == "SessionStart"
        and f"REJECTED a.py line 1: the developer said: {FEEDBACK}" in (told["additionalContext"])
    )


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
    the file with no Stet process looking since (every answer true in every process)."""
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
