"""GitHub Copilot CLI in the agent's loop, with the JSON of its documentation (it needs an
account to start: not run here): `stet integrate copilot` writes .github/hooks/stet.json, each
hook is the real `stet hook copilot --event NAME` process as its `bash` command runs it; a turn's
edits captured into the task copilot-<session>, the redo of a rejected change denied in Copilot's
flat shape with the developer's words."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from support.capturetools import agent_repo, hunks
from support.clitools import commit_all, stet

STET = f"{shlex.quote(sys.executable)} -m stet"
S1 = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9"
FEEDBACK = "keep the limit at 10"


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    (root / ".github" / "hooks").mkdir(parents=True)
    mine = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}]}}
    (root / ".github" / "hooks" / "stet.json").write_text(json.dumps(mine))
    p = stet("integrate", "copilot", "--stet", STET, cwd=root)
    assert p.returncode == 0, p.stderr
    assert "preToolUse" in p.stderr, "what its users miss is said"
    commit_all(root, "copilot set up")
    return root


def run(root, event: str, **fields: object) -> dict:
    conf = json.loads((root / ".github" / "hooks" / "stet.json").read_text())["hooks"]
    (hook,) = [h for h in conf[event] if "hook copilot" in h["bash"]]
    body = {"sessionId": S1, "timestamp": 1765051200000, "cwd": str(root), **fields}
    p = subprocess.run(["bash", "-c", hook["bash"]], input=json.dumps(body), capture_output=True, text=True, cwd=root)
    assert p.returncode == 0 and p.stderr == "", (event, p.stderr)
    return json.loads(p.stdout) if p.stdout.strip() else {}


def edit(root, old: str, new: str) -> dict:
    args = json.dumps({"path": str(root / "a.py"), "old_str": old, "new_str": new})
    pre = run(root, "preToolUse", toolName="edit", toolArgs=args)
    if pre:
        return pre
    (root / "a.py").write_text((root / "a.py").read_text().replace(old, new, 1))
    result = {"resultType": "success", "textResultForLlm": "File a.py updated"}
    assert run(root, "postToolUse", toolName="edit", toolArgs=args, toolResult=result) == {}
    return {}


def test_a_turn_is_captured_and_the_redo_of_a_rejection_denied(repo):
    conf = json.loads((repo / ".github" / "hooks" / "stet.json").read_text())
    assert conf["version"] == 1 and conf["hooks"]["preToolUse"][0]["bash"] == "./audit.sh", "theirs kept"
    assert edit(repo, "LIMIT = 10", "LIMIT = 20") == {}, "allowed: nothing printed"
    assert run(repo, "agentStop", stopReason="end_turn") == {}
    (limit,) = [h["id"] for h in hunks(repo, "--task", f"copilot-{S1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)
    assert edit(repo, "LIMIT = 10", "LIMIT = 20") == {
        "permissionDecision": "deny",
        "permissionDecisionReason": f"The developer rejected this change to a.py: {FEEDBACK}",
    }
    assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")
    hooks = json.loads((repo / ".github" / "hooks" / "stet.json").read_text())["hooks"]
    assert "sessionStart" not in hooks and "userPromptSubmitted" not in hooks, "their answers are not read"
    p = stet("integrate", "copilot", "--stet", STET, cwd=repo)
    assert "already set up" in p.stdout
