"""The other agents' hooks against what a model (or anyone writing their input) chooses to send:
a Codex patch naming files outside the workspace, in `.git` or `.stet`, a patch that is not one,
inputs of the wrong shape, a Gemini edit of a path outside. Each hook is the real `stet hook
AGENT` process: it exits 0, denies nothing by accident, records nothing outside the workspace
and touches no file."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from support.capturetools import agent_repo
from support.clitools import commit_all, stet

STET = [sys.executable, "-m", "stet"]
SESSION = "019a6f2e-dead-7b42-9a8e-3f5d2c1b0a97"


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    assert stet("integrate", "codex", "--stet", shlex.join(STET), cwd=root).returncode == 0
    assert stet("integrate", "gemini", "--stet", shlex.join(STET), cwd=root).returncode == 0
    (tmp_path / "outside.txt").write_text("outside\n")
    commit_all(root, "set up")
    return root


def hook(root, agent: str, body: object) -> subprocess.CompletedProcess:
    data = body if isinstance(body, str) else json.dumps(body)
    return subprocess.run([*STET, "hook", agent], input=data, capture_output=True, text=True, cwd=root)


def codex_pre(root, patch: object) -> dict:
    return {
        "session_id": SESSION,
        "cwd": str(root),
        "hook_event_name": "PreToolUse",
        "turn_id": "t",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
    }


@pytest.mark.parametrize(
    "patch",
    [
        "*** Begin Patch\n*** Update File: ../outside.txt\n@@\n-outside\n+mine\n*** End Patch",
        "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n*** End Patch",
        "*** Begin Patch\n*** Delete File: .stet/stet.db\n*** End Patch",
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: /etc/passwd\n*** End Patch",
        "not a patch at all",
        "*** Begin Patch\n*** Update File: a.py\n?garbage\n*** End Patch",
        "*** Begin Patch\n" + "+x\n" * 100_000 + "*** End Patch",
        {"not": "text"},
    ],
)
def test_a_codex_patch_outside_or_malformed_is_let_be(repo, patch):
    before = (repo.parent / "outside.txt").read_text()
    p = hook(repo, "codex", codex_pre(repo, patch))
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", (p.stdout, p.stderr)
    assert (repo.parent / "outside.txt").read_text() == before
    stop = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "Stop", "turn_id": "t"}
    assert hook(repo, "codex", stop).returncode == 0
    listed = stet("status", "--all", "--json", "--task", f"codex-{SESSION}", cwd=repo)
    assert listed.returncode != 0 or json.loads(listed.stdout)["hunks"] == [], "nothing captured"


@pytest.mark.parametrize(
    ("agent", "body"),
    [
        ("codex", "[1, 2, 3]"),
        ("codex", "{not json"),
        ("codex", {"hook_event_name": "PreToolUse"}),
        ("gemini", {"session_id": SESSION, "hook_event_name": "BeforeTool", "tool_name": "replace", "tool_input": []}),
        ("copilot", {"toolName": "edit"}),
        ("cursor", {"hook_event_name": "preToolUse"}),
    ],
)
def test_inputs_of_the_wrong_shape_are_one_line_on_stderr_and_exit_0(repo, agent, body):
    p = hook(repo, agent, body)
    assert p.returncode == 0 and p.stdout == ""
    assert p.stderr == "" or (p.stderr.startswith("stet hook: ") and p.stderr.count("\n") == 1), p.stderr


def test_a_gemini_edit_outside_the_workspace_is_not_reviewed(repo):
    outside = repo.parent / "outside.txt"
    body = {
        "session_id": SESSION,
        "cwd": str(repo),
        "hook_event_name": "BeforeTool",
        "tool_name": "write_file",
        "tool_input": {"file_path": str(outside), "content": "mine\n"},
    }
    p = hook(repo, "gemini", body)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    assert outside.read_text() == "outside\n"
