"""Request changes while the agent works (opt-in: `stet integrate AGENT --request-changes`): at
the end of a turn, the developer's rejections with feedback the agent was not told yet send it
back to work (Claude Code and Codex: Stop's `decision: "block"` with the reason), once each, and
never while the agent already goes on from a stop hook. A checkout's `git config
stet.requestChanges` (the editor's setting writes it) wins over the option both ways. Each hook
is the real `stet hook`."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys

from support.capturetools import agent_repo, hunks
from support.claudecode import Claude
from support.clitools import commit_all, git, stet
from support.codexcli import Codex

STET = f"{shlex.quote(sys.executable)} -m stet"
S1 = "4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d"
FEEDBACK = "keep the limit at 10"


def test_claude_code_is_sent_back_with_the_feedback_once(tmp_path):
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    commit_all(repo, "set up")
    claude = Claude(repo, S1)
    claude.prompt("raise the limit")
    assert claude.edit("a.py", "LIMIT = 10", "LIMIT = 20") == {}
    assert "decision" not in claude.stop(), "nothing rejected: it stops"
    (limit,) = [h["id"] for h in hunks(repo, "--task", f"claude-{S1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)

    assert claude.run("Stop", stop_hook_active=True) == {}, "already going on from a stop hook: no loop"
    sent = claude.stop()
    assert sent["decision"] == "block" and f"REJECTED a.py line 1: {FEEDBACK}" in sent["reason"]
    assert len(sent["reason"]) <= 4000
    assert claude.stop() == {}, "told once"
    assert claude.prompt("go on") == {}, "and not told again at the next prompt"


def test_codex_is_sent_back_and_without_the_option_nothing_changes(tmp_path):
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "codex", "--stet", STET, cwd=repo).returncode == 0
    commit_all(repo, "set up")
    codex = Codex(repo, S1)
    codex.prompt("raise the limit")
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-LIMIT = 10\n+LIMIT = 20\n*** End Patch\n"

    def apply() -> None:
        (repo / "a.py").write_text((repo / "a.py").read_text().replace("LIMIT = 10", "LIMIT = 20", 1))

    assert codex.patch(patch, apply) == {}
    codex.stop()
    (limit,) = [h["id"] for h in hunks(repo, "--task", f"codex-{S1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", limit, "--feedback", FEEDBACK, cwd=repo)
    assert "decision" not in codex.stop(), "not asked for: the turn ends"

    assert stet("integrate", "codex", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    codex = Codex(repo, S1)  # the hooks as written now (Stet's own replaced, not doubled)
    sent = codex.stop()
    assert set(sent) == {"decision", "reason"} and sent["decision"] == "block", "not told yet: sent back now"
    assert FEEDBACK in sent["reason"]
    assert codex.run("Stop", stop_hook_active=True) == {}
    assert codex.stop() == {}, "told once"


def test_the_checkouts_setting_wins_over_the_option_both_ways(tmp_path):
    """`git config stet.requestChanges true` sends the agent back though integrate was run
    without --request-changes; false never does, though it was run with it; unset (or a word
    that is no yes or no), the option decides."""
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, cwd=repo).returncode == 0
    commit_all(repo, "set up")
    claude = Claude(repo, S1)
    claude.prompt("raise the limit")
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    (h,) = [h for h in hunks(repo, "--task", f"claude-{S1}") if h["newText"] == "LIMIT = 20\n"]
    stet("reject", h["id"], "--feedback", FEEDBACK, cwd=repo)
    git("config", "--local", "stet.requestChanges", "maybe", cwd=repo)
    assert "decision" not in claude.stop(), "not a yes or no: the option (not given) decides"

    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    claude = Claude(repo, S1)
    git("config", "--local", "stet.requestChanges", "off", cwd=repo)
    assert "decision" not in claude.stop(), "turned off in the checkout: never sent back"
    assert "sentBack" not in next(x for x in hunks(repo) if x["id"] == h["id"])

    assert stet("integrate", "claude-code", "--stet", STET, cwd=repo).returncode == 0
    claude = Claude(repo, S1)
    git("config", "--local", "stet.requestChanges", "true", cwd=repo)
    sent = claude.stop()
    assert sent["decision"] == "block" and FEEDBACK in sent["reason"], "turned on in the checkout"
    assert claude.run("Stop", stop_hook_active=True) == {}, "still no loop"
    assert claude.stop() == {}, "told once"


def test_the_review_says_what_was_sent_back_and_to_which_agent(tmp_path):
    """Once request changes sent a rejection back, every door says so (`sentBack`, "sent back to
    the agent") and names the agent (`agent`, "proposed by claude-code"), from any process; the
    rejection undone and made again is not the one sent back."""
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    commit_all(repo, "set up")
    claude = Claude(repo, S1)
    claude.prompt("raise the limit")
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    (h,) = [h for h in hunks(repo, "--task", f"claude-{S1}") if h["newText"] == "LIMIT = 20\n"]
    assert h["agent"] == "claude-code" and "sentBack" not in h
    stet("reject", h["id"], "--feedback", FEEDBACK, cwd=repo)
    assert "sentBack" not in hunks(repo, "--task", f"claude-{S1}")[0], "rejected, not sent back yet"
    assert claude.stop()["decision"] == "block"

    (sent,) = [x for x in hunks(repo, "--task", f"claude-{S1}") if x["id"] == h["id"]]
    assert sent["sentBack"] is True and sent["agent"] == "claude-code" and sent["status"] == "rejected"
    table = stet("status", "--all", cwd=repo).stdout
    row = next(line for line in table.splitlines() if h["id"] in line)
    assert "sent back to the agent" in row and "claude-code" in row and FEEDBACK in row
    shown = stet("show", h["id"], cwd=repo).stdout.splitlines()[0]
    assert "sent back to the agent" in shown and "proposed by claude-code" in shown

    assert stet("undo", h["id"], cwd=repo).returncode == 0
    assert stet("reject", h["id"], "--feedback", "still no", cwd=repo).returncode == 0
    (again,) = [x for x in hunks(repo, "--task", f"claude-{S1}") if x["id"] == h["id"]]
    assert "sentBack" not in again, "another rejection: not the one sent back"
    assert "sent back" not in stet("show", h["id"], cwd=repo).stdout


def test_a_store_of_the_previous_schema_gains_the_column_and_keeps_its_hunks(tmp_path):
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    commit_all(repo, "set up")
    claude = Claude(repo, S1)
    claude.prompt("raise the limit")
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    before = hunks(repo)
    db = repo / ".stet" / "stet.db"
    conn = sqlite3.connect(db)
    try:  # the store as the previous version left it
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute("ALTER TABLE hunks DROP COLUMN sent_back")
        conn.execute(f"PRAGMA user_version={version - 1}")
        conn.commit()
    finally:
        conn.close()
    assert hunks(repo) == before
    (h,) = [h for h in before if h["newText"] == "LIMIT = 20\n"]
    stet("reject", h["id"], "--feedback", FEEDBACK, cwd=repo)
    assert Claude(repo, S1).stop()["decision"] == "block"
    assert next(x for x in hunks(repo) if x["id"] == h["id"])["sentBack"] is True
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
    finally:
        conn.close()


def test_a_sent_back_answer_that_was_never_written_is_taken_back(tmp_path):
    """The Stop answer could not be written (its stdout closed): the rejection is not said to be
    sent back, and the next stop sends it."""
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    commit_all(repo, "set up")
    claude = Claude(repo, S1)
    claude.prompt("raise the limit")
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    (h,) = [h for h in hunks(repo) if h["newText"] == "LIMIT = 20\n"]
    stet("reject", h["id"], "--feedback", FEEDBACK, cwd=repo)
    (command,) = claude.commands["Stop"]
    body = json.dumps(claude.payload("Stop", stop_hook_active=False))
    p = subprocess.run(["/bin/sh", "-c", command + " >&-"], input=body, capture_output=True, text=True, cwd=repo)
    assert p.returncode == 0, p.stderr
    assert "sentBack" not in next(x for x in hunks(repo) if x["id"] == h["id"]), p.stderr
    assert claude.stop()["decision"] == "block", "not delivered: sent at the next stop"
    assert next(x for x in hunks(repo) if x["id"] == h["id"])["sentBack"] is True
