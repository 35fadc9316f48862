"""The default message of captured hunks: the agent's name and what it was asked, short."""

from __future__ import annotations

import pytest

from stet.domain.headline import LIMIT, asked, line, program


@pytest.mark.parametrize(
    "argv, name, ask",
    [
        (["claude", "-p", "fix the login bug"], "claude", "fix the login bug"),
        (["/home/me/.local/bin/claude", "-p", "fix the login bug"], "claude", "fix the login bug"),
        (["python", "../agent.py"], "agent.py", None),
        (["/usr/bin/python3.12", "-u", "/abs/agent.py", "1"], "agent.py", None),
        (["python", "-X", "dev", "agent.py", "do the thing"], "agent.py", "do the thing"),
        (["python", "-m", "mypkg.cli", "do the thing"], "mypkg.cli", "do the thing"),
        (["node", "dist/agent.js", "--task", "add a test for signup"], "agent.js", "add a test for signup"),
        (["sh", "-c", "echo x > b.txt"], "sh", None),
        (["codex", "exec", "--sandbox", "workspace-write", "add input validation"], "codex", "add input validation"),
        (["gemini", "--approval-mode=auto_edit", "-p", "add validation"], "gemini", "add validation"),
        (["aider", "--yes", "-m", "short", "a.py", "--message=the longer ask wins"], "aider", "the longer ask wins"),
        (["python"], "python", None),
    ],
)
def test_the_agent_and_its_ask_from_a_command_line(argv, name, ask):
    who, start = program(argv)
    assert who == name
    assert asked(argv[start:]) == ask


def test_a_line_is_one_bounded_line():
    assert line("claude", "fix the login bug") == "claude: fix the login bug"
    assert line("claude", None) == line("claude", "  ") == "claude"
    assert line("claude-code", "fix the\n  login\tbug\n") == "claude-code: fix the login bug"
    long = line("claude-code", "why " * 500)
    assert len(long) <= LIMIT and long.endswith("…") and long.startswith("claude-code: why why")
    assert len(line("x" * 500, "y z")) <= LIMIT
