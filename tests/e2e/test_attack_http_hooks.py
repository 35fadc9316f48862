"""Attacks on `stet mcp --http`'s hook route (`POST /hooks/claude-code`) by whoever holds the
token (any MCP client of the server): what it names is read only where Claude Code keeps it,
what it sends is bounded in size and in memory, and what it was told is told again when the
answer never reached it (issue 29, items 8, 9, 12)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support.capturetools import agent_repo, hunks
from support.claudecode import Claude, free_port, serve_http, stop_http
from support.clitools import commit_all, stet

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
    message, which every MCP client with the token reads (item 8)."""
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
