"""Codex CLI in the agent's loop: `stet integrate codex` writes .codex/hooks.json and
.codex/config.toml, and each hook is the real `stet hook codex` process fed the JSON Codex
sends: a turn's apply_patch edits captured into the task codex-<session>, the redo of a
rejected change denied in Codex's shape with the developer's words, the open review told at
session start and each decision once at the next prompt."""

from __future__ import annotations

import json
import shlex
import sys
import tomllib

import pytest

from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet
from support.codexcli import Codex

STET = f"{shlex.quote(sys.executable)} -m stet"
S1 = "019a6f2e-6c1d-7b42-9a8e-3f5d2c1b0a97"
S2 = "019a6f30-0b2c-7d11-8e4f-5a6b7c8d9e0f"
FEEDBACK = "keep the limit at 10: the API gateway caps requests at 10 per second"
RAISE = "*** Begin Patch\n*** Update File: a.py\n@@\n-LIMIT = 10\n+LIMIT = 20\n*** End Patch\n"


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    (root / ".codex").mkdir()
    (root / ".codex" / "config.toml").write_text(
        '# mine\nmodel = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    )
    p = stet("integrate", "codex", "--stet", STET, cwd=root)
    assert p.returncode == 0, p.stderr
    assert "/hooks" in p.stderr and "trust" in p.stderr, "Codex skips untrusted project hooks: said"
    commit_all(root, "codex set up")
    return root


def _edit(root, old: str, new: str):
    def apply() -> None:
        path = root / "a.py"
        path.write_text(path.read_text().replace(old, new, 1))

    return apply


def test_integrate_writes_codex_hooks_and_its_mcp_server_keeping_what_is_there(repo):
    hooks = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == ["PostToolUse", "PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"]
    # Bash too: the real Codex gives its hooks a patch run through its shell as a Bash call.
    assert (hooks["PreToolUse"][0]["matcher"], hooks["PostToolUse"][0]["matcher"]) == (
        "apply_patch|Bash",
        "apply_patch",
    )
    assert hooks["Stop"][0]["hooks"][0]["command"].endswith("hook codex")
    text = (repo / ".codex" / "config.toml").read_text()
    assert text.startswith('# mine\nmodel = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    config = tomllib.loads(text)
    assert config["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert config["mcp_servers"]["stet"]["args"][-3:] == ["mcp", "--agent", "codex"]
    # Again: nothing to do, nothing duplicated; the developer's own hook stays.
    conf = json.loads((repo / ".codex" / "hooks.json").read_text())
    conf["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send done"}]})
    (repo / ".codex" / "hooks.json").write_text(json.dumps(conf))
    p = stet("integrate", "codex", "--stet", STET, cwd=repo)
    assert p.returncode == 0 and "already set up" in p.stdout
    again = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    assert [h["command"] for e in again["Stop"] for h in e["hooks"]][1:] == ["notify-send done"]
    assert (repo / ".codex" / "config.toml").read_text() == text


def test_a_config_toml_that_cannot_be_read_is_refused_and_nothing_written(tmp_path):
    root = agent_repo(tmp_path / "repo")
    (root / ".codex").mkdir()
    (root / ".codex" / "config.toml").write_text("model = \n")
    p = stet("integrate", "codex", "--stet", STET, cwd=root)
    assert p.returncode != 0 and "not valid TOML" in p.stderr
    assert not (root / ".codex" / "hooks.json").exists()
    (root / ".codex" / "config.toml").write_text('mcp_servers = { docs = { command = "d" } }\n')
    p = stet("integrate", "codex", "--stet", STET, cwd=root)
    assert p.returncode != 0 and "add it yourself" in p.stderr
    assert (root / ".codex" / "config.toml").read_text() == 'mcp_servers = { docs = { command = "d" } }\n'


def test_a_turn_is_captured_a_rejection_told_once_and_its_redo_denied(repo):
    codex = Codex(repo, S1)
    assert codex.start() == {}
    assert codex.prompt("raise the limit") == {}
    assert codex.patch(RAISE, _edit(repo, "LIMIT = 10", "LIMIT = 20")) == {}, "allowed: nothing printed"
    new = "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n+limits\n*** End Patch\n"

    def add() -> None:
        (repo / "docs").mkdir()
        (repo / "docs" / "notes.md").write_text("# Notes\nlimits\n")

    assert codex.patch(new, add) == {}
    stop = codex.stop()
    assert f"task codex-{S1}" in stop["systemMessage"]
    turn = hunks(repo, "--task", f"codex-{S1}")
    assert sorted(h["status"] for h in turn) == ["pending", "pending"]
    assert (repo / "a.py").read_text().startswith("LIMIT = 20\n"), "kept in the files for review"
    limit = next(h["id"] for h in turn if h["newText"] == "LIMIT = 20\n")
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)
    assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")

    told = codex.prompt("go on")["hookSpecificOutput"]
    assert told["hookEventName"] == "UserPromptSubmit"
    assert f"REJECTED a.py line 1: {FEEDBACK}" in told["additionalContext"]
    assert codex.prompt("and now?") == {}, "told once"

    before = (repo / "a.py").read_text()
    assert codex.patch(RAISE, _edit(repo, "LIMIT = 10", "LIMIT = 20")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"The developer rejected this change to a.py: {FEEDBACK}",
        }
    }
    assert (repo / "a.py").read_text() == before
    other = "*** Begin Patch\n*** Update File: a.py\n@@\n-LIMIT = 10\n+LIMIT = 12\n*** End Patch\n"
    assert codex.patch(other, _edit(repo, "LIMIT = 10", "LIMIT = 12")) == {}

    # A new session is told the open review at its start.
    start = Codex(repo, S2).start()["hookSpecificOutput"]
    assert start["hookEventName"] == "SessionStart"
    assert "REJECTED a.py line 1" in start["additionalContext"] and FEEDBACK in start["additionalContext"]


def test_a_move_with_an_edit_and_a_delete_are_captured_as_such(repo):
    codex = Codex(repo, S1)
    codex.prompt("tidy")
    patch = "*** Begin Patch\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-beta\n+BETA\n*** Delete File: old.txt\n*** End Patch"

    def apply() -> None:
        text = (repo / "b.txt").read_text()
        (repo / "c.txt").write_text(text.replace("beta", "BETA"))
        (repo / "b.txt").unlink()
        (repo / "old.txt").unlink()

    assert codex.patch(patch, apply) == {}
    codex.stop()
    turn = hunks(repo, "--task", f"codex-{S1}")
    kinds = sorted((h["kind"], h["uri"].rsplit("/", 1)[-1]) for h in turn)
    assert kinds == [("delete", "old.txt"), ("edit", "c.txt"), ("rename", "b.txt")], kinds
