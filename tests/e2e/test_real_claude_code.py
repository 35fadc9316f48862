"""The real Claude Code (the pinned npm release, support/agents_install.py) with the hooks `stet
integrate claude-code` writes, driven end to end by the scripted model: its edit is captured as a
pending hunk of task claude-SESSION, the open review reaches the model at the next session's start,
and the redo of a change the developer rejected is denied, the model getting the developer's words
as the tool's error."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from support import residents
from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet
from support.real_agents import PYTHON, agent_binary, claude_env, dump_hooks, dumped, run, same_shape
from support.scripted_model import Request, ScriptedModel, text, tool

EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
STET = f"{shlex.quote(PYTHON)} -m stet"
FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"


def claude(exe: Path, repo: Path, env: dict[str, str], prompt: str) -> dict:
    cmd = [str(exe), "-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"]
    p = run(cmd, repo, env)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    result = json.loads(p.stdout)
    assert result["is_error"] is False, result
    return result


def claude_resumed(exe: Path, repo: Path, env: dict[str, str], prompt: str, more: list[str]) -> dict:
    cmd = [str(exe), "-p", prompt, *more, "--output-format", "json", "--permission-mode", "acceptEdits"]
    p = run(cmd, repo, env)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    result = json.loads(p.stdout)
    assert result["is_error"] is False, result
    return result


def tool_results(request: Request) -> list[dict]:
    return [
        block
        for message in request.body.get("messages", [])
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


def hook_records(home: Path) -> list[dict]:
    """What Claude Code's transcripts say of the hooks it ran: each hook's outcome (an attachment of
    type hook_*, with exit code and stderr) and each stop's summary of hook errors."""
    found = []
    for transcript in (home / ".claude" / "projects").rglob("*.jsonl"):
        for line in transcript.read_text().splitlines():
            entry = json.loads(line)
            attachment = entry.get("attachment") or {}
            if attachment.get("type", "").startswith("hook_"):
                found.append(attachment)
            elif entry.get("subtype", "").endswith("hook_summary"):
                found.append({"type": entry["subtype"], "hookErrors": entry.get("hookErrors")})
    return found


@pytest.mark.parametrize("resident", ["off", "on"])
def test_real_claude_code_edit_captured_rejected_and_its_redo_denied(tmp_path, resident):
    """Each hook in its own process, and (as users run it) handed to the resident."""
    exe = agent_binary("claude")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, cwd=repo).returncode == 0
    commit_all(repo, "claude code set up")
    try:
        session = one_rejected_then_denied(exe, repo, tmp_path / "home", resident)
        if resident == "on":
            assert residents.calls(repo) > 0, "no hook went through the resident"
    finally:
        if resident == "on":
            residents.stop(repo)

    # Every hook answered as Claude Code expects: no hook error in its transcripts; the turn's end
    # said to the developer; Stet's MCP server (.mcp.json) connected.
    records = hook_records(tmp_path / "home")
    assert not [r for r in records if "error" in r["type"] or r.get("hookErrors")], records
    assert all(r.get("exitCode", 0) == 0 and not r.get("stderr") for r in records), records
    said = [r["content"] for r in records if r["type"] == "hook_system_message"]
    assert said == [f"Stet: 1 hunk(s) of this turn are waiting for review (left in the files; task claude-{session})"]
    mcp_logs = [f.read_text() for f in (tmp_path / "home").rglob("mcp-logs-stet/*.jsonl")]
    assert len(mcp_logs) == 2 and all("Successfully connected" in log for log in mcp_logs), mcp_logs


def one_rejected_then_denied(exe: Path, repo: Path, home: Path, resident: str) -> str:
    """Two sessions of the real Claude Code: the first's edit captured, then rejected by the
    developer; the second told so at its start, and its redo denied. Returns the first session."""
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}
    with ScriptedModel() as model:
        env = claude_env(home, model.url)
        env.update(residents.ON if resident == "on" else {"STET_RESIDENT": "off"})

        # The first session edits: the turn is captured, the edit kept in the file for review.
        model.play([tool("Edit", edit), text("raised")])
        first = claude(exe, repo, env, "raise the limit to 20")
        session = first["session_id"]
        assert (repo / "a.py").read_text().startswith("LIMIT = 20\n")
        (hunk,) = hunks(repo, "--task", f"claude-{session}")
        assert (hunk["status"], hunk["oldText"], hunk["newText"]) == ("pending", "LIMIT = 10\n", "LIMIT = 20\n")
        assert tool_results(model.turns()[-1])[0].get("is_error") is not True

        # The developer rejects it with feedback: the baseline is back in the file.
        assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

        # The next session is told the open review, and its redo of the same edit is denied.
        seen = len(model.requests)
        model.play([tool("Edit", edit), text("understood")])
        second = claude(exe, repo, env, "raise the limit to 20 again")
        assert second["session_id"] != session
        turns = [r for r in model.requests[seen:] if r.main]
        assert len(turns) == 2, [r.answer for r in turns]
        # Claude Code 2.1.332 puts it in a message of role "system" among the messages.
        told = [result_text(m) for m in turns[0].body["messages"] if m["role"] == "system"]
        opening = "SessionStart hook additional context: Stet: the developer's review of your changes"
        assert any(t.startswith(opening) for t in told), told
        assert any(f"REJECTED a.py line 1: the developer said: {FEEDBACK}" in t for t in told), told
        (denied,) = tool_results(turns[1])
        assert denied.get("is_error") is True, denied
        reason = f"The developer rejected this change to a.py: {FEEDBACK}"
        assert result_text(denied) == f"PreToolUse:Edit hook error: {reason}", denied
        assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
        # Nothing else was recorded: the one hunk, rejected.
        assert [(h["id"], h["status"]) for h in hunks(repo)] == [(hunk["id"], "rejected")]
    return session


def test_real_claude_code_hook_inputs_as_recorded(tmp_path):
    """Without Stet: the inputs Claude Code gives its hooks for an Edit and a Write of a new file, as
    recorded in tests/fixtures/agents/claude-code-hooks.jsonl (what support/claudecode.py plays)."""
    exe = agent_binary("claude")
    repo = agent_repo(tmp_path / "repo")
    home, dump = tmp_path / "home", tmp_path / "hooks.jsonl"
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(dump_hooks(EVENTS, dump)))
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}
    write = {"file_path": str(repo / "new.py"), "content": "NEW = 1\n"}

    with ScriptedModel() as model:
        model.play([tool("Edit", edit), tool("Write", write), text("done")])
        claude(exe, repo, claude_env(home, model.url), "raise the limit and add new.py")
    assert (repo / "new.py").read_text() == "NEW = 1\n"

    seen = dumped(dump, {str(repo): "$CWD", str(home): "$HOME"})
    tools = [(e["hook_event_name"], e["tool_name"]) for e in seen if "tool_name" in e]
    assert tools == [(event, name) for name in ("Edit", "Write") for event in ("PreToolUse", "PostToolUse")]
    post_write = [e for e in seen if e["hook_event_name"] == "PostToolUse"][1]
    assert post_write["tool_response"]["type"] == "create", post_write
    same_shape(seen, "claude-code-hooks.jsonl")


def test_real_claude_code_sent_back_with_the_developers_feedback_once(tmp_path):
    """Request changes (`stet integrate claude-code --request-changes`) in the real Claude Code: while
    the session works on, the developer rejects a hunk of it with feedback; at the turn's end Stop
    answers `decision: "block"`, the model gets the feedback as a user message and goes on, and the
    next stop (`stop_hook_active`) lets it end: once, no loop."""
    exe = agent_binary("claude")
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    commit_all(repo, "claude code set up")
    edit = {"file_path": str(repo / "a.py"), "old_string": "LIMIT = 10", "new_string": "LIMIT = 20"}
    other = {"file_path": str(repo / "b.txt"), "old_string": "beta", "new_string": "BETA"}

    with ScriptedModel() as model:
        env = {**claude_env(tmp_path / "home", model.url), "STET_RESIDENT": "off"}
        model.play([tool("Edit", edit), text("raised")])
        session = claude(exe, repo, env, "raise the limit to 20")["session_id"]
        (hunk,) = hunks(repo, "--task", f"claude-{session}")

        def rejected_meanwhile(_body: dict):
            assert stet("reject", hunk["id"], "--feedback", FEEDBACK, cwd=repo).returncode == 0
            return tool("Edit", other)

        seen = len(model.requests)
        model.play([rejected_meanwhile, text("b.txt done"), text("the limit stays at 10")])
        cmd = ["--resume", session]
        result = claude_resumed(exe, repo, env, "now capitalise beta in b.txt", cmd)
        assert result["session_id"] == session and result["result"] == "the limit stays at 10", result
        turns = [r for r in model.requests[seen:] if r.main]
        assert len(turns) == 3, [r.answer for r in turns]
        back = [
            result_text(m) if isinstance(m["content"], list) else m["content"]
            for m in turns[2].body["messages"][len(turns[1].body["messages"]) :]
            if m["role"] == "user"
        ]
        assert len(back) == 1 and f"REJECTED a.py line 1: {FEEDBACK}" in back[0], back
        assert "Stet: the developer rejected changes of yours with feedback" in back[0], back
        assert (repo / "b.txt").read_text() == "alpha\nBETA\ngamma\n"
        statuses = sorted((h["status"], h["newText"]) for h in hunks(repo, "--task", f"claude-{session}"))
        assert statuses == [("pending", "BETA\n"), ("rejected", "LIMIT = 20\n")], statuses

    # Claude Code records a Stop's block as a "blocking error" of that hook, the reason as its text:
    # the one sent back; every other hook succeeded.
    records = hook_records(tmp_path / "home")
    blocked = [r for r in records if r["type"] == "hook_blocking_error"]
    assert len(blocked) == 1 and blocked[0]["hookEvent"] == "Stop", blocked
    assert blocked[0]["blockingError"]["blockingError"] in back[0], (blocked, back)
    summaries = [r["hookErrors"] for r in records if r["type"] == "stop_hook_summary"]
    assert summaries == [[], [blocked[0]["blockingError"]["blockingError"]], []], summaries
    others = [r for r in records if r["type"] not in ("hook_blocking_error", "stop_hook_summary")]
    assert not [r for r in others if "error" in r["type"]], others
    assert all(r.get("exitCode", 0) == 0 and not r.get("stderr") for r in others), others
