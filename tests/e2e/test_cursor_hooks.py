"""Cursor in the agent's loop, with the JSON of its documentation (not installable here): `stet
integrate cursor` writes .cursor/hooks.json and .cursor/mcp.json, each hook is the real `stet
hook cursor` process as Cursor runs its `command`; a turn's edits captured into the task
cursor-<conversation>, the redo of a rejected change denied in Cursor's shape with the developer's
words, the open review told at the next session's start."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet

STET = f"{shlex.quote(sys.executable)} -m stet"
C1 = "b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e"
C2 = "c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f"
FEEDBACK = "keep the limit at 10"


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    (root / ".cursor").mkdir()
    (root / ".cursor" / "hooks.json").write_text(json.dumps({"version": 1, "hooks": {"stop": [{"command": "./x.sh"}]}}))
    p = stet("integrate", "cursor", "--stet", STET, cwd=root)
    assert p.returncode == 0, p.stderr
    commit_all(root, "cursor set up")
    return root


def run(root, conversation: str, event: str, **fields: object) -> dict:
    conf = json.loads((root / ".cursor" / "hooks.json").read_text())["hooks"]
    (hook,) = [h for h in conf[event] if "hook cursor" in h["command"]]
    body = {
        "conversation_id": conversation,
        "generation_id": "gen-1",
        "model": "claude-4.5-sonnet",
        "hook_event_name": event,
        "cursor_version": "2.1.0",
        "workspace_roots": [str(root)],
        **fields,
    }
    p = subprocess.run(
        ["/bin/sh", "-c", hook["command"]], input=json.dumps(body), capture_output=True, text=True, cwd=root
    )
    assert p.returncode == 0 and p.stderr == "", (event, p.stderr)
    return json.loads(p.stdout) if p.stdout.strip() else {}


def edit(root, old: str, new: str) -> dict:
    path = str(root / "a.py")
    tool_input = {"file_path": path, "old_string": old, "new_string": new}
    pre = run(root, C1, "preToolUse", tool_name="Write", tool_input=tool_input, tool_use_id="t1")
    if pre:
        return pre
    (root / "a.py").write_text((root / "a.py").read_text().replace(old, new, 1))
    assert run(root, C1, "afterFileEdit", file_path=path, edits=[{"old_string": old, "new_string": new}]) == {}
    return {}


def test_a_turn_is_captured_the_redo_of_a_rejection_denied_and_told_at_start(repo):
    conf = json.loads((repo / ".cursor" / "hooks.json").read_text())["hooks"]
    assert conf["stop"][0] == {"command": "./x.sh"}, "theirs kept"
    assert json.loads((repo / ".cursor" / "mcp.json").read_text())["mcpServers"]["stet"]["args"][-1] == "cursor"
    assert run(repo, C1, "sessionStart") == {}
    assert edit(repo, "LIMIT = 10", "LIMIT = 20") == {}
    assert run(repo, C1, "stop", status="completed", loop_count=0) == {}
    (limit,) = [h["id"] for h in hunks(repo, "--task", f"cursor-{C1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)
    reason = f"The developer rejected this change to a.py: {FEEDBACK}"
    assert edit(repo, "LIMIT = 10", "LIMIT = 20") == {
        "permission": "deny",
        "agent_message": reason,
        "user_message": reason,
    }
    assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
    told = run(repo, C2, "sessionStart")
    assert set(told) == {"additional_context"} and FEEDBACK in told["additional_context"]
    assert "already set up" in stet("integrate", "cursor", "--stet", STET, cwd=repo).stdout
