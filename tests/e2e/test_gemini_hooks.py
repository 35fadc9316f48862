"""Gemini CLI in the agent's loop: `stet integrate gemini` writes .gemini/settings.json, and each
hook is the real `stet hook gemini` process fed the JSON Gemini CLI sends: a turn's edits
captured into the task gemini-<session>, the redo of a rejected change denied in Gemini's shape
with the developer's words, the open review told at session start and each decision once at the
next prompt."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet
from support.geminicli import Gemini

STET = f"{shlex.quote(sys.executable)} -m stet"
S1 = "5b0f7a1c-3d2e-4f60-8a9b-0c1d2e3f4a5b"
S2 = "6c1a8b2d-4e3f-4a71-9b0c-1d2e3f4a5b6c"
FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    (root / ".gemini").mkdir()
    (root / ".gemini" / "settings.json").write_text(
        json.dumps({"theme": "GitHub", "mcpServers": {"d": {"command": "d"}}})
    )
    p = stet("integrate", "gemini", "--stet", STET, cwd=root)
    assert p.returncode == 0, p.stderr
    assert "trusted folder" in p.stderr
    commit_all(root, "gemini set up")
    return root


def test_integrate_keeps_the_settings_there_and_adds_hooks_and_the_mcp_server(repo):
    settings = json.loads((repo / ".gemini" / "settings.json").read_text())
    assert settings["theme"] == "GitHub" and settings["mcpServers"]["d"] == {"command": "d"}
    assert settings["mcpServers"]["stet"]["args"][-3:] == ["mcp", "--agent", "gemini"]
    assert sorted(settings["hooks"]) == ["AfterAgent", "AfterTool", "BeforeAgent", "BeforeTool", "SessionStart"]
    assert settings["hooks"]["BeforeTool"][0]["matcher"] == "replace|write_file"
    p = stet("integrate", "gemini", "--stet", STET, cwd=repo)
    assert p.returncode == 0 and "already set up" in p.stdout


def test_a_turn_is_captured_a_rejection_told_once_and_its_redo_denied(repo):
    gemini = Gemini(repo, S1)
    assert gemini.start() == {}
    assert gemini.prompt("raise the limit") == {}
    assert gemini.replace("a.py", "LIMIT = 10", "LIMIT = 20") == {}
    assert f"task gemini-{S1}" in gemini.stop()["systemMessage"]
    (limit,) = [h["id"] for h in hunks(repo, "--task", f"gemini-{S1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)

    told = gemini.prompt("go on")["hookSpecificOutput"]
    assert told["hookEventName"] == "BeforeAgent" and f"REJECTED a.py line 1: {FEEDBACK}" in told["additionalContext"]
    assert gemini.prompt("and now?") == {}, "told once"
    before = (repo / "a.py").read_text()
    assert gemini.replace("a.py", "LIMIT = 10", "LIMIT = 20") == {
        "decision": "deny",
        "reason": f"The developer rejected this change to a.py: {FEEDBACK}",
    }
    assert (repo / "a.py").read_text() == before
    whole = {"file_path": str(repo / "a.py"), "content": before.replace("LIMIT = 10", "LIMIT = 20")}
    assert Gemini(repo, S1).run("BeforeTool", tool_name="write_file", tool_input=whole)["decision"] == "deny"

    start = Gemini(repo, S2).start()["hookSpecificOutput"]
    assert start["hookEventName"] == "SessionStart" and FEEDBACK in start["additionalContext"]
