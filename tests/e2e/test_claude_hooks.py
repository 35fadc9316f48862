"""Claude Code: `stet integrate claude-code` merges into the project's configuration, and the
hook command it writes, run the way Claude Code runs it (a shell command, one JSON object on
stdin: session_id, cwd, hook_event_name, tool_name, tool_input), snapshots before the agent's
first write, records what each write left, and captures each turn."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from support.capturetools import B_BASE, agent_repo, duplicates, hunks
from support.clitools import commit_all, snapshot, stet, stet_json
from support.scripted_agent import A_BASE

STET = f"{shlex.quote(sys.executable)} -m stet"
SESSION = "5f1c2a9e-0b7d-4c61-9a8e-3d2f1e0c9b8a"
TASK = f"claude-{SESSION}"


def settings(root: Path) -> dict:
    return json.loads((root / ".claude" / "settings.json").read_text())


class Claude:
    """Plays Claude Code: runs the configured hook commands around its own file writes, each as
    Claude Code does, a shell command run by `/bin/sh -c`."""

    def __init__(self, root: Path, session: str = SESSION, transcript: str = "/dev/null"):
        self.root = root
        self.session = session
        self.transcript = transcript
        conf = settings(root)["hooks"]
        self.commands = {event: [h["command"] for e in conf[event] for h in e["hooks"]] for event in conf}

    def hook(self, event: str, payload: dict) -> subprocess.CompletedProcess:
        body = {"session_id": self.session, "transcript_path": self.transcript, "cwd": str(self.root)}
        body.update({"hook_event_name": event, "permission_mode": "default", **payload})
        results = [
            subprocess.run(
                ["/bin/sh", "-c", cmd], input=json.dumps(body), capture_output=True, text=True, cwd=self.root
            )
            for cmd in self.commands[event]
        ]
        (p,) = results
        return p

    def write(self, tool: str, path: str, text: str, tool_input: dict | None = None) -> None:
        """One tool call: PreToolUse, the write itself, PostToolUse."""
        full = self.root / path
        data = {"tool_name": tool, "tool_input": {"file_path": str(full), **(tool_input or {})}}
        pre = self.hook("PreToolUse", data)
        assert pre.returncode == 0 and pre.stdout == "", (pre.stdout, pre.stderr)
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)
        post = self.hook("PostToolUse", {**data, "tool_response": {"filePath": str(full), "success": True}})
        assert post.returncode == 0, post.stderr

    def stop(self) -> dict:
        p = self.hook("Stop", {"stop_hook_active": False})
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout) if p.stdout.strip() else {}


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, cwd=root).returncode == 0
    commit_all(root, "claude code set up")
    return root


def test_integrate_puts_stets_hooks_on_the_tools_of_today(tmp_path):
    """Settings an earlier `integrate` wrote (before NotebookEdit was captured) get the matcher of
    today when it runs again: an entry of Stet's hook alone takes it; from an entry the developer
    shares with Stet's hook, theirs keeps its matcher and Stet's moves to an entry of its own."""
    root = agent_repo(tmp_path / "repo")
    (root / ".claude").mkdir()
    command = f"{shlex.quote(sys.executable)} -m stet hook claude-code"
    stets = {"type": "command", "command": command}
    mine = {"type": "command", "command": "echo mine"}
    old = {
        "PreToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [stets]}],
        "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [mine, stets]}],
    }
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": old}))
    p = stet("integrate", "claude-code", "--stet", f"{sys.executable} -m stet", cwd=root)
    assert p.returncode == 0 and "hooks.PreToolUse (Stet's hook on Edit|MultiEdit|Write|NotebookEdit)" in p.stdout
    hooks = settings(root)["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "Edit|MultiEdit|Write|NotebookEdit", "hooks": [stets]}]
    assert hooks["PostToolUse"] == [
        {"matcher": "Edit|MultiEdit|Write", "hooks": [mine]},
        {"matcher": "Edit|MultiEdit|Write|NotebookEdit", "hooks": [stets]},
    ]
    before = (root / ".claude" / "settings.json").read_bytes()
    p = stet("integrate", "claude-code", "--stet", f"{sys.executable} -m stet", cwd=root)
    assert p.returncode == 0 and "already set up" in p.stdout
    assert (root / ".claude" / "settings.json").read_bytes() == before


def test_integrate_merges_and_never_clobbers(tmp_path):
    root = agent_repo(tmp_path / "repo")
    (root / ".claude").mkdir()
    mine = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]},
        "enabledMcpjsonServers": ["other"],
    }
    (root / ".claude" / "settings.json").write_text(json.dumps(mine))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}}))
    on_path = tmp_path / "bin"  # `stet` on PATH: the default
    on_path.mkdir()
    (on_path / "stet").symlink_to(Path(sys.executable).parent / "stet")
    env = {"PATH": f"{on_path}:{os.environ['PATH']}"}
    p = stet("integrate", "claude-code", cwd=root, env=env)
    assert p.returncode == 0 and "hooks.Stop" in p.stdout
    conf = settings(root)
    assert conf["permissions"] == mine["permissions"]
    assert conf["hooks"]["PreToolUse"][0] == mine["hooks"]["PreToolUse"][0]
    assert conf["hooks"]["PreToolUse"][1] == {
        "matcher": "Edit|MultiEdit|Write|NotebookEdit",
        "hooks": [{"type": "command", "command": "stet hook claude-code"}],
    }
    assert conf["hooks"]["PostToolUse"][0]["matcher"] == "Edit|MultiEdit|Write|NotebookEdit"
    assert conf["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "stet hook claude-code"}]}]
    assert conf["enabledMcpjsonServers"] == ["other", "stet"]
    servers = json.loads((root / ".mcp.json").read_text())["mcpServers"]
    assert servers == {
        "other": {"command": "other-server"},
        "stet": {"command": "stet", "args": ["mcp", "--agent", "claude-code"]},
    }
    # Again: nothing to add, nothing written.
    files = snapshot(root)
    p = stet("integrate", "claude-code", cwd=root, env=env)
    assert p.returncode == 0 and "already set up" in p.stdout and snapshot(root) == files
    # A settings file that is not valid JSON is refused, and left exactly as it is.
    (root / ".claude" / "settings.json").write_text("{ not json")
    p = stet("integrate", "claude-code", cwd=root, env=env)
    assert p.returncode == 2 and "cannot be read as JSON" in p.stderr
    assert (root / ".claude" / "settings.json").read_text() == "{ not json"


@pytest.mark.parametrize("where", [".mcp.json", ".claude"])
def test_integrate_checks_every_file_before_writing_any(tmp_path, where):
    """A symlinked .mcp.json (or .claude folder) is refused before anything is written: not
    settings.json first and then the refusal, nor the store."""
    root = agent_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.json").write_text("{}\n")
    (outside / "mcp.json").write_text('{"mcpServers": {}}\n')
    if where == ".mcp.json":
        (root / ".mcp.json").symlink_to(outside / "mcp.json")
    else:
        (root / ".claude").symlink_to(outside)
    files = snapshot(root)
    p = stet("integrate", "claude-code", "--stet", STET, cwd=root)
    assert p.returncode == 2, p.stderr
    assert snapshot(root) == files and not (root / ".stet").exists()
    assert "symlink" in p.stderr and "nothing was written" in p.stderr, p.stderr
    assert (outside / "settings.json").read_text() == "{}\n"
    assert (outside / "mcp.json").read_text() == '{"mcpServers": {}}\n'


def test_the_mcp_server_it_configures_starts(repo):
    conf = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["stet"]

    async def tools() -> set[str]:
        params = StdioServerParameters(command=conf["command"], args=conf["args"], cwd=str(repo))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return {t.name for t in (await session.list_tools()).tools}

    import asyncio

    assert "propose_edits" in asyncio.run(tools())


def test_hooks_capture_each_turn_kept_in_the_files(repo):
    claude = Claude(repo)
    # Turn 1: an Edit, a Write of a new file, a MultiEdit.
    a1 = A_BASE.replace("LIMIT = 10", "LIMIT = 20")
    claude.write("Edit", "a.py", a1, {"old_string": "LIMIT = 10", "new_string": "LIMIT = 20"})
    claude.write("Write", "pkg/new.py", "VALUE = 1\n", {"content": "VALUE = 1\n"})
    claude.write(
        "MultiEdit", "b.txt", "ALPHA\nbeta\nGAMMA\n", {"edits": [{"old_string": "alpha", "new_string": "ALPHA"}]}
    )
    out = claude.stop()
    assert "3 hunk(s)" in out["systemMessage"] or "4 hunk(s)" in out["systemMessage"]
    turn1 = hunks(repo, "--task", TASK)
    assert sorted((Path(h["uri"]).name, h["kind"]) for h in turn1) == [
        ("a.py", "edit"),
        ("b.txt", "edit"),
        ("b.txt", "edit"),
        ("new.py", "create"),
    ]
    assert all(h["kept"] and h["status"] == "pending" for h in turn1)
    assert (repo / "a.py").read_text() == a1, "the agent finds its own edits next turn"
    ctx = stet_json("resume", TASK, cwd=repo)
    assert ctx["task"]["agent"] == "claude-code"

    # The developer reviews: rejects the b.txt ALPHA hunk (the file gets alpha back), accepts a.py.
    alpha = next(h["id"] for h in turn1 if h["newText"] == "ALPHA\n")
    limit = next(h["id"] for h in turn1 if h["newText"] == "LIMIT = 20\n")
    stet("reject", alpha, "--feedback", "lower case, please", cwd=repo)
    stet("accept", limit, cwd=repo)
    assert (repo / "b.txt").read_text() == "alpha\nbeta\nGAMMA\n"

    # Turn 2: the agent changes its own new line again and one more line of a.py.
    a2 = a1.replace("LIMIT = 20", "LIMIT = 25").replace('"world"', '"there"')
    claude.write("Edit", "a.py", a2)
    claude.write("Edit", "pkg/new.py", "VALUE = 2\n")
    claude.stop()
    all_hunks = hunks(repo, "--task", TASK)
    assert duplicates(all_hunks) == []
    live = sorted(
        (Path(h["uri"]).name, h["oldText"], h["newText"], h["status"]) for h in all_hunks if h["status"] == "pending"
    )
    assert live == [
        ("a.py", '    print(shout("world"))\n', '    print(shout("there"))\n', "pending"),
        ("a.py", "LIMIT = 20\n", "LIMIT = 25\n", "pending"),
        ("b.txt", "gamma\n", "GAMMA\n", "pending"),
        ("new.py", "", "VALUE = 2\n", "pending"),
    ]
    assert (repo / "a.py").read_text() == a2 and (repo / "pkg" / "new.py").read_text() == "VALUE = 2\n"


def test_a_change_by_the_developer_after_the_agent_stays_theirs(repo):
    claude = Claude(repo)
    lines = "".join(f"line {i}\n" for i in range(1, 13))
    (repo / "n.txt").write_text(lines)
    commit_all(repo, "n")
    claude.write("Edit", "n.txt", lines.replace("line 2\n", "TWO\n"))
    (repo / "n.txt").write_text(
        lines.replace("line 2\n", "TWO\n").replace("line 9\n", "NINE\n")
    )  # the developer, after
    claude.stop()
    (h,) = hunks(repo, "--task", TASK)
    assert (h["oldText"], h["newText"]) == ("line 2\n", "TWO\n"), "only the agent's part is proposed"
    stet("reject", h["id"], cwd=repo)
    assert (repo / "n.txt").read_text() == lines.replace("line 9\n", "NINE\n"), "the developer's text stays"

    # In the agent's own lines: which part is whose cannot be told - left as it is, said so.
    claude.write("Edit", "n.txt", lines.replace("line 5\n", "FIVE\n").replace("line 9\n", "NINE\n"))
    (repo / "n.txt").write_text(lines.replace("line 5\n", "Five (mine)\n").replace("line 9\n", "NINE\n"))
    out = claude.stop()
    assert "n.txt not captured" in out["systemMessage"] and "left as it is" in out["systemMessage"]
    assert (repo / "n.txt").read_text() == lines.replace("line 5\n", "Five (mine)\n").replace("line 9\n", "NINE\n")
    assert [h["status"] for h in hunks(repo, "--task", TASK)] == ["rejected"]


def test_restore_mode_takes_the_turn_out_of_the_files(tmp_path):
    root = agent_repo(tmp_path / "repo")
    stet("integrate", "claude-code", "--stet", STET, "--restore", cwd=root)
    commit_all(root, "claude code set up")
    claude = Claude(root)
    claude.write("Edit", "b.txt", B_BASE.replace("beta", "BETA"))
    claude.stop()
    assert (root / "b.txt").read_text() == B_BASE
    (h,) = hunks(root)
    assert h["status"] == "pending" and "kept" not in h


def test_hostile_and_broken_payloads_never_block_the_agent(repo, tmp_path):
    claude = Claude(repo)
    files = snapshot(repo)
    for path in ("/etc/passwd", str(repo / ".stet" / "stet.db"), str(repo / ".git" / "config")):
        pre = claude.hook("PreToolUse", {"tool_name": "Write", "tool_input": {"file_path": path}})
        assert pre.returncode == 0 and pre.stdout == "", pre.stderr
    assert claude.stop() == {}, "nothing was snapshotted, nothing is captured"
    assert (
        claude.hook("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": str(repo / "a.py")}}).returncode
        == 0
    )
    assert snapshot(repo) == files
    (cmd,) = claude.commands["Stop"]
    for raw in ("not json", "[]", json.dumps({"hook_event_name": "Stop"}), "\xff"):
        p = subprocess.run(cmd, shell=True, input=raw.encode("latin-1"), capture_output=True, cwd=repo)
        assert p.returncode == 0 and p.stdout == b"" and p.stderr.count(b"\n") == 1, (raw, p.returncode, p.stderr)
        assert p.stderr.startswith(b"stet hook"), p.stderr
    # No Stet store where the session runs: said, not blocking.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    body = {"session_id": "x", "cwd": str(elsewhere), "hook_event_name": "PreToolUse", "tool_name": "Write"}
    body["tool_input"] = {"file_path": str(elsewhere / "f.txt")}
    p = subprocess.run(cmd, shell=True, input=json.dumps(body), capture_output=True, text=True, cwd=elsewhere)
    assert p.returncode == 0 and p.stdout == "" and "no Stet store" in p.stderr and p.stderr.count("\n") == 1


# --- how Claude Code starts Stet, and what its hunks say -----------------------
def _spaced_stet(tmp_path: Path) -> str:
    """The venv's `stet`, reached through a folder whose path has spaces."""
    spaced = tmp_path / "my tools" / "stet bin"
    spaced.mkdir(parents=True)
    (spaced / "stet").symlink_to(Path(sys.executable).parent / "stet")
    return str(spaced / "stet")


def test_a_stet_path_with_spaces_works_in_the_hooks_and_the_mcp_server(tmp_path):
    root = agent_repo(tmp_path / "repo")
    program = _spaced_stet(tmp_path)
    p = stet("integrate", "claude-code", "--stet", program, cwd=root)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    commit_all(root, "claude code set up")
    claude = Claude(root)
    assert claude.commands["Stop"] == [f"{shlex.quote(program)} hook claude-code"]
    claude.write("Edit", "a.py", A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    assert "1 hunk(s)" in claude.stop()["systemMessage"]
    (h,) = hunks(root, "--task", TASK)
    assert h["kept"] and h["status"] == "pending" and h["newText"] == "LIMIT = 20\n"
    # .mcp.json: a program and its arguments, started without a shell.
    conf = json.loads((root / ".mcp.json").read_text())["mcpServers"]["stet"]
    assert conf == {"command": program, "args": ["mcp", "--agent", "claude-code"]}

    async def tools() -> set[str]:
        params = StdioServerParameters(command=conf["command"], args=conf["args"], cwd=str(root))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return {t.name for t in (await session.list_tools()).tools}

    import asyncio

    assert "propose_edits" in asyncio.run(tools())


def test_a_command_line_for_stet_keeps_its_words(tmp_path):
    root = agent_repo(tmp_path / "repo")
    spaced = tmp_path / "my python"
    spaced.mkdir()
    (spaced / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    (spaced / "python").chmod(0o755)
    given = f"{shlex.quote(str(spaced / 'python'))} -m stet"
    assert stet("integrate", "claude-code", "--stet", given, cwd=root).returncode == 0
    claude = Claude(root)
    assert claude.commands["Stop"] == [f"{given} hook claude-code"]
    claude.write("Edit", "a.py", A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    assert "1 hunk(s)" in claude.stop()["systemMessage"]
    conf = json.loads((root / ".mcp.json").read_text())["mcpServers"]["stet"]
    assert conf == {"command": str(spaced / "python"), "args": ["-m", "stet", "mcp", "--agent", "claude-code"]}


@pytest.mark.parametrize("given", ["/nowhere/stet", "no-such-stet-program", "{tmp}/my tools/stet", "{tmp}/plain.txt"])
def test_a_stet_that_is_no_program_is_refused_and_nothing_written(tmp_path, given):
    root = agent_repo(tmp_path / "repo")
    (tmp_path / "plain.txt").write_text("not a program\n")
    (tmp_path / "my tools").mkdir()
    p = stet("integrate", "claude-code", "--stet", given.format(tmp=tmp_path), cwd=root)
    assert p.returncode == 2 and "--stet" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not (root / ".claude").exists() and not (root / ".mcp.json").exists()


def test_without_stet_on_path_the_running_stet_is_configured(tmp_path):
    root = agent_repo(tmp_path / "repo")
    env = {"PATH": "/usr/bin:/bin"}  # no `stet` there
    p = stet("integrate", "claude-code", cwd=root, env=env)
    assert p.returncode == 0 and "not on PATH" in p.stderr, p.stderr
    conf = json.loads((root / ".mcp.json").read_text())["mcpServers"]["stet"]
    assert conf["command"] == sys.executable and conf["args"][:2] == ["-m", "stet"]
    claude = Claude(root)
    claude.write("Edit", "a.py", A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    assert "1 hunk(s)" in claude.stop()["systemMessage"]


def _transcript(path: Path, prompt: object) -> str:
    """A Claude Code transcript (JSON lines) whose last prompt is `prompt`, followed by the
    turn's tool calls and their results (user entries too, which are not prompts)."""
    entries = [
        {"type": "user", "message": {"role": "user", "content": "an earlier prompt, of the turn before"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}},
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: injected, not typed"}},
        {"type": "user", "message": {"role": "user", "content": prompt}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {}}],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok " * 99}],
            },
        },
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Fixed it."}]}},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return str(path)


@pytest.mark.parametrize(
    "prompt, message",
    [
        ("fix the login bug", "claude-code: fix the login bug"),
        ([{"type": "text", "text": "fix the\nlogin   bug"}], "claude-code: fix the login bug"),
        ("why " * 200, None),  # bounded
    ],
)
def test_a_turns_hunks_say_what_claude_was_asked(repo, tmp_path, monkeypatch, prompt, message):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))  # where Claude Code keeps its sessions
    folder = tmp_path / "claude" / "projects" / str(repo).replace("/", "-")
    folder.mkdir(parents=True)
    claude = Claude(repo, transcript=_transcript(folder / f"{SESSION}.jsonl", prompt))
    claude.write("Edit", "a.py", A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    claude.stop()
    (h,) = hunks(repo, "--task", TASK)
    if message is not None:
        assert h["message"] == message
    else:
        assert h["message"].startswith("claude-code: why why") and h["message"].endswith("…")
        assert len(h["message"]) <= 160


def test_without_a_readable_transcript_the_message_is_the_agents_name(repo, tmp_path, monkeypatch):
    """Only the session's own transcript where Claude Code keeps it is read:
    not a file elsewhere, nor another session's, nor one reached through a symlink."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    projects = tmp_path / "claude" / "projects"
    (projects / "-repo").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _transcript(outside / f"{SESSION}.jsonl", "a prompt outside Claude Code's folder")
    _transcript(projects / "-repo" / "another-session.jsonl", "another session's prompt")
    os.symlink(outside / f"{SESSION}.jsonl", projects / f"{SESSION}.jsonl")
    os.symlink(outside, projects / "-linked")
    given = [
        "/dev/null",
        str(projects / "-repo" / f"{SESSION}.jsonl"),  # missing
        str(outside / f"{SESSION}.jsonl"),
        str(projects / "-repo" / "another-session.jsonl"),
        str(projects / f"{SESSION}.jsonl"),
        str(projects / "-linked" / f"{SESSION}.jsonl"),
        str(projects / "-repo" / ".." / ".." / ".." / "elsewhere" / f"{SESSION}.jsonl"),
    ]
    for transcript in given:
        claude = Claude(repo, transcript=transcript)
        claude.write("Edit", "b.txt", "changed by " + transcript + "\n")
        claude.stop()
    assert {h["message"] for h in hunks(repo, "--task", TASK)} == {"claude-code"}


# --- a background subagent's notification is not the developer's prompt -----
def _notified_transcript(path: Path, marks: dict, text: str) -> str:
    """A transcript whose turn began with the developer's prompt; a background subagent then
    finished, and Claude Code started a turn of its own with a user entry (`marks`, `text`)."""
    _transcript(path, "rename the helper")
    entries = [
        {
            "type": "user",
            "message": {"role": "user", "content": text},
            **marks,
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t2", "name": "Edit", "input": {}}],
            },
        },
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2"}]}},
    ]
    with path.open("a") as f:
        f.write("".join(json.dumps(e) + "\n" for e in entries))
    return str(path)


NOTIFICATION = (
    "<task-notification>\n<task-id>a1b2c3</task-id>\n<status>completed</status>\n"
    '<summary>Agent "explore" completed</summary>\n</task-notification>'
)


@pytest.mark.parametrize(
    "marks, text",
    [
        ({"promptSource": "system", "origin": {"kind": "task-notification"}}, NOTIFICATION),  # as Claude Code writes it
        ({"promptSource": "system"}, "a note Claude Code wrote itself"),
        ({"origin": {"kind": "task-notification"}}, "finished"),
        ({}, NOTIFICATION),
    ],
)
def test_a_background_tasks_notification_is_not_taken_for_the_prompt(repo, tmp_path, monkeypatch, marks, text):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))  # where Claude Code keeps its sessions
    folder = tmp_path / "claude" / "projects" / str(repo).replace("/", "-")
    folder.mkdir(parents=True)
    claude = Claude(repo, transcript=_notified_transcript(folder / f"{SESSION}.jsonl", marks, text))
    claude.write("Edit", "a.py", A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    claude.stop()
    (h,) = hunks(repo, "--task", TASK)
    assert h["message"] == "claude-code: rename the helper"


# --- a PostToolUse whose PreToolUse never ran -------------------------------
def _post_only(claude: Claude, tool: str, path: str, text: str, tool_input: dict, response: dict) -> dict:
    """The write and its PostToolUse, its PreToolUse never run (failed, timed out, not set up)."""
    full = claude.root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    data = {"tool_name": tool, "tool_input": {"file_path": str(full), **tool_input}}
    p = claude.hook("PostToolUse", {**data, "tool_response": {"filePath": str(full), **response}})
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = json.loads(p.stdout)
    assert out["systemMessage"] == out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    return out


def test_a_write_whose_pre_tool_use_never_ran_is_said_and_captured_when_it_can_be(repo):
    claude = Claude(repo)
    # Claude Code's report holds the file before the call, and the call made from it gives the file.
    a1 = A_BASE.replace("LIMIT = 10", "LIMIT = 20")
    edit = {"old_string": "LIMIT = 10", "new_string": "LIMIT = 20", "replace_all": False}
    out = _post_only(claude, "Edit", "a.py", a1, edit, {"originalFile": A_BASE, "userModified": False})
    assert "did not see a.py" in out["systemMessage"] and "as Claude Code reported it" in out["systemMessage"]
    # A report that does not give the file as it is (forged): the last commit is the base.
    (repo / "b.txt").write_text("alpha\nbeta\nGAMMA\n")
    forged = {"originalFile": "something else entirely\n"}
    out = _post_only(claude, "Edit", "b.txt", "alpha\nbeta\nGAMMA\n", {"old_string": "x", "new_string": "y"}, forged)
    assert "against the last commit" in out["systemMessage"]
    # A new file Claude Code reports as created.
    created = {"type": "create", "content": "VALUE = 1\n"}
    out = _post_only(claude, "Write", "pkg/new.py", "VALUE = 1\n", {"content": "VALUE = 1\n"}, created)
    assert "not existing before" in out["systemMessage"]
    # Nothing tells what an untracked file held: said, not captured (reject could not restore it).
    (repo / "notes.txt").write_text("mine\n")
    out = _post_only(claude, "Write", "notes.txt", "theirs\n", {"content": "theirs\n"}, {"type": "update"})
    assert "cannot tell what it held" in out["systemMessage"] and "not captured" in out["systemMessage"]
    # A name the agent chose is shown inert.
    out = _post_only(claude, "Write", "x\x1b[2J.txt", "y\n", {"content": "y\n"}, {"type": "update"})
    assert "\x1b" not in json.loads(json.dumps(out))["systemMessage"] and "x\\x1b[2J.txt" in out["systemMessage"]

    assert "3 hunk(s)" in claude.stop()["systemMessage"]
    got = sorted((Path(h["uri"]).name, h["kind"], h["oldText"], h["newText"]) for h in hunks(repo, "--task", TASK))
    assert got == [
        ("a.py", "edit", "LIMIT = 10\n", "LIMIT = 20\n"),
        ("b.txt", "edit", "gamma\n", "GAMMA\n"),
        ("new.py", "create", "", "VALUE = 1\n"),
    ]
    assert (repo / "notes.txt").read_text() == "theirs\n"


# --- NotebookEdit is captured and guarded like Edit ------------------------
def _notebook(sources: dict[str, str]) -> str:
    """A notebook as Jupyter writes it (nbformat 4.5: indent 1, sources as lists of lines)."""
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": cid,
            "metadata": {},
            "outputs": [],
            "source": src.splitlines(keepends=True),
        }
        for cid, src in sources.items()
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def test_notebook_edits_are_captured_and_a_rejected_one_is_denied(repo):
    cells = {"c1": "import math\n", "c2": "rate = 10\nprint(rate)", "c3": "print('done')"}
    now = dict(cells)  # the notebook's cells as the agent's last write left them
    (repo / "nb.ipynb").write_text(_notebook(cells))
    commit_all(repo, "a notebook")
    claude = Claude(repo)
    conf = settings(repo)["hooks"]
    assert "NotebookEdit" in conf["PreToolUse"][0]["matcher"] and "NotebookEdit" in conf["PostToolUse"][0]["matcher"]

    def notebook_edit(cell: str, source: str) -> subprocess.CompletedProcess:
        data = {
            "tool_name": "NotebookEdit",
            "tool_input": {"notebook_path": str(repo / "nb.ipynb"), "cell_id": cell, "new_source": source},
        }
        pre = claude.hook("PreToolUse", data)
        if pre.stdout:
            return pre
        now[cell] = source
        (repo / "nb.ipynb").write_text(_notebook(now))
        post = claude.hook("PostToolUse", {**data, "tool_response": {"cell_id": cell, "new_source": source}})
        assert post.returncode == 0 and post.stdout == "" and post.stderr == "", post.stderr
        return pre

    assert notebook_edit("c2", "rate = 20\nprint(rate)").stdout == ""
    assert "1 hunk(s)" in claude.stop()["systemMessage"]
    (h,) = hunks(repo, "--task", TASK)
    assert Path(h["uri"]).name == "nb.ipynb" and '"rate = 20\\n",' in h["newText"], h
    assert stet("reject", h["id"], "--feedback", "the rate stays 10", cwd=repo).returncode == 0
    assert (repo / "nb.ipynb").read_text() == _notebook(cells)
    now.update(cells)

    again = notebook_edit("c2", "rate = 20\nprint(rate)")
    out = json.loads(again.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "the rate stays 10" in out["permissionDecisionReason"]
    assert (repo / "nb.ipynb").read_text() == _notebook(cells), "denied: not written"
    assert notebook_edit("c2", "rate = 12\nprint(rate)").stdout == "", "another change is allowed"
    assert notebook_edit("c3", "print('finished')").stdout == ""
