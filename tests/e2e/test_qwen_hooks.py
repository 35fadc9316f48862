"""Qwen Code in the agent's loop: Claude Code's hook shape with Qwen Code's own tool names.
`stet integrate qwen` writes .qwen/settings.json; each hook is the real `stet hook qwen`
process: a turn's `edit` captured into the task qwen-<session>, its redo after a rejection
denied in Claude Code's shape, the decision told once at the next prompt and the open review at
a session's start."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet

STET = f"{shlex.quote(sys.executable)} -m stet"
S1 = "7d3e2f1a-0b9c-4d8e-a7f6-5e4d3c2b1a09"
S2 = "8e4f3a2b-1c0d-4e9f-b8a7-6f5e4d3c2b1a"
FEEDBACK = "keep the limit at 10"


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    p = stet("integrate", "qwen", "--stet", STET, cwd=root)
    assert p.returncode == 0, p.stderr
    commit_all(root, "qwen set up")
    return root


def run(root, session: str, event: str, **fields: object) -> dict:
    conf = json.loads((root / ".qwen" / "settings.json").read_text())["hooks"]
    (hook,) = [h for e in conf[event] for h in e["hooks"]]
    body = {"session_id": session, "transcript_path": "/nowhere.jsonl", "cwd": str(root), "hook_event_name": event}
    p = subprocess.run(
        ["/bin/sh", "-c", hook["command"]], input=json.dumps({**body, **fields}), capture_output=True, text=True
    )
    assert p.returncode == 0 and p.stderr == "", (event, p.stderr)
    return json.loads(p.stdout) if p.stdout.strip() else {}


def edit(root, old: str, new: str) -> dict:
    tool_input = {"file_path": str(root / "a.py"), "old_string": old, "new_string": new}
    pre = run(root, S1, "PreToolUse", tool_name="edit", tool_input=tool_input)
    if pre:
        return pre
    (root / "a.py").write_text((root / "a.py").read_text().replace(old, new, 1))
    assert run(root, S1, "PostToolUse", tool_name="edit", tool_input=tool_input, tool_response={}) == {}
    return {}


def test_a_turn_is_captured_told_once_and_the_redo_denied(repo):
    settings = json.loads((repo / ".qwen" / "settings.json").read_text())
    assert settings["mcpServers"]["stet"]["args"][-1] == "qwen"
    assert "edit" in settings["hooks"]["PreToolUse"][0]["matcher"]
    assert run(repo, S1, "SessionStart", source="startup") == {}
    assert edit(repo, "LIMIT = 10", "LIMIT = 20") == {}
    assert f"task qwen-{S1}" in run(repo, S1, "Stop", stop_hook_active=False)["systemMessage"]
    (limit,) = [h["id"] for h in hunks(repo, "--task", f"qwen-{S1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)
    told = run(repo, S1, "UserPromptSubmit", prompt="go on")["hookSpecificOutput"]["additionalContext"]
    assert f"REJECTED a.py line 1: {FEEDBACK}" in told
    assert run(repo, S1, "UserPromptSubmit", prompt="again") == {}
    assert edit(repo, "LIMIT = 10", "LIMIT = 20")["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": f"The developer rejected this change to a.py: {FEEDBACK}",
    }
    start = run(repo, S2, "SessionStart", source="startup")["hookSpecificOutput"]["additionalContext"]
    assert FEEDBACK in start
