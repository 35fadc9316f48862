"""A commit keeps: a kept hunk (the agent's text left in the file for review) whose new text the
developer commits is accepted by that commit, noticed by the next `stet` process, once."""

import os
import sqlite3
import subprocess
from pathlib import Path

from support.clitools import STET, commit_all, git, make_repo, stet, stet_json

BASE = "".join(f"line {i}\n" for i in range(1, 11))


def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ws")
    (root / "a.py").write_text(BASE)
    (root / "b.txt").write_text("alpha\nbeta\ngamma\n")
    (root / ".gitignore").write_text(".stet/\n")
    commit_all(root)
    return root


def kept(root: Path, name: str, old: str, new: str) -> dict:
    """The agent's edit of `name`, captured and kept in the file for review."""
    assert stet("snapshot", name, cwd=root).returncode == 0
    path = root / name
    path.write_text(path.read_text().replace(old, new))
    (h,) = stet_json("capture", "--keep", cwd=root)["hunks"]
    assert h["kept"] and h["status"] == "pending"
    return h


def status(root: Path, env: dict | None = None) -> dict[str, dict]:
    return {h["id"]: h for h in stet_json("status", "--all", cwd=root, env=env)["hunks"]}


def commit_ops(root: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        return conn.execute("SELECT op_id, args FROM oplog WHERE op_id LIKE 'commit-keep:%' ORDER BY lsn").fetchall()
    finally:
        conn.close()


def head(root: Path) -> str:
    return git("rev-parse", "HEAD", cwd=root).strip()


def test_a_committed_kept_hunk_is_accepted_by_its_commit_once(tmp_path):
    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    commit_all(root, "the agent's change, as it is")
    sha = head(root)
    got = status(root)[h["id"]]
    assert (got["status"], got.get("decidedBy"), got.get("commit"), got["inFile"]) == ("applied", "commit", sha, True)
    assert (root / "a.py").read_text() == BASE.replace("line 3\n", "AGENT 3\n"), "the file is as committed"
    (op,) = commit_ops(root)
    assert '"decidedBy": "commit"' in op[1] and sha in op[1] and h["id"] in op[1]
    # Another process noticing the same HEAD adds nothing.
    assert status(root)[h["id"]] == got
    assert len(commit_ops(root)) == 1


def test_only_kept_hunks_and_only_the_agents_text(tmp_path):
    root = repo(tmp_path)
    edited = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    # A pending proposal (not kept: the file got its text back); the developer then writes
    # the same text and commits it: still theirs to decide.
    assert stet("snapshot", "b.txt", cwd=root).returncode == 0
    (root / "b.txt").write_text("alpha\nAGENT\ngamma\n")
    (proposed,) = stet_json("capture", cwd=root)["hunks"]
    assert not proposed.get("kept") and (root / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    (root / "b.txt").write_text("alpha\nAGENT\ngamma\n")
    # The developer changed the agent's text before committing it.
    (root / "a.py").write_text(BASE.replace("line 3\n", "AGENT 3, mine\n"))
    commit_all(root, "edited")
    now = status(root)
    assert "decidedBy" not in now[proposed["id"]] and now[proposed["id"]]["status"] != "applied"
    assert "decidedBy" not in now[edited["id"]] and now[edited["id"]]["status"] != "applied"
    assert commit_ops(root) == []


def test_turned_off_by_the_workspace_or_the_environment(tmp_path):
    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    commit_all(root, "kept")
    assert status(root, env={"STET_COMMIT_KEEPS": "off"})[h["id"]]["status"] == "pending"
    git("config", "stet.commitKeeps", "false", cwd=root)
    assert status(root)[h["id"]]["status"] == "pending"
    git("config", "--unset", "stet.commitKeeps", cwd=root)
    assert status(root)[h["id"]]["status"] == "pending", "that HEAD was looked at while off"
    assert commit_ops(root) == []
    (root / "b.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    commit_all(root, "on again: the next HEAD is looked at")
    got = status(root)[h["id"]]
    assert (got["status"], got["decidedBy"]) == ("applied", "commit")
    assert got["commit"] == git("rev-parse", "HEAD~1", cwd=root).strip(), "the commit that put the text there"


def test_undone_like_any_accept_and_not_decided_again(tmp_path):
    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    commit_all(root, "kept")
    assert status(root)[h["id"]]["status"] == "applied"
    assert stet("undo", h["id"], cwd=root).returncode == 0
    got = status(root)[h["id"]]
    assert got["status"] == "pending" and "decidedBy" not in got
    assert (root / "a.py").read_text() == BASE, "undo reverts the edit, as any accept's"
    assert status(root)[h["id"]]["status"] == "pending", "the same commit does not decide it again"
    assert len(commit_ops(root)) == 1


def test_killed_mid_way_then_exactly_once(tmp_path):
    root = repo(tmp_path)
    one = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    two = kept(root, "b.txt", "beta\n", "AGENT\n")
    commit_all(root, "both kept")
    # Killed right after the first hunk's decision committed, before its edit was confirmed.
    p = stet("status", "--all", "--json", cwd=root, env={"STET_FAULT": "decide:after-commit"})
    assert p.returncode == -9, (p.returncode, p.stderr)
    assert len(commit_ops(root)) == 1
    after = status(root)
    assert [after[h["id"]]["status"] for h in (one, two)] == ["applied", "applied"]
    assert {after[h["id"]]["commit"] for h in (one, two)} == {head(root)}
    assert len(commit_ops(root)) == 2
    assert status(root) == after and len(commit_ops(root)) == 2
    assert (root / "a.py").read_text() == BASE.replace("line 3\n", "AGENT 3\n")
    assert (root / "b.txt").read_text() == "alpha\nAGENT\ngamma\n"


def test_a_store_of_the_previous_schema_gains_the_column_and_keeps_its_hunks(tmp_path):
    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    db = root / ".stet" / "stet.db"
    conn = sqlite3.connect(db)
    try:  # the store as the version before commit keeps left it (schema 9)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute("ALTER TABLE hunks DROP COLUMN sent_back")  # (schema 11's)
        conn.execute("ALTER TABLE hunks DROP COLUMN by_commit")
        conn.execute("PRAGMA user_version=9")
        conn.commit()
    finally:
        conn.close()
    commit_all(root, "kept")
    got = status(root)[h["id"]]
    assert (got["status"], got["decidedBy"], got["commit"]) == ("applied", "commit", head(root))
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
    finally:
        conn.close()


def test_two_processes_noticing_at_once_log_it_once(tmp_path):
    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    commit_all(root, "kept")
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    both = [
        subprocess.Popen([*STET, "status", "--all", "--json"], cwd=root, env=env, stdout=subprocess.DEVNULL)
        for _ in range(2)
    ]
    assert [p.wait(timeout=60) for p in both] == [0, 0]
    assert len(commit_ops(root)) == 1
    assert status(root)[h["id"]]["decidedBy"] == "commit"


def test_the_resident_notices_before_a_call_and_the_setting_is_the_callers(tmp_path):
    from support import residents

    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    try:
        assert status(root, env=residents.ON)[h["id"]]["status"] == "pending"
        residents.wait_for(lambda: residents.resident_pid(root), "the resident the first call started to answer")
        commit_all(root, "kept")
        off = {**residents.ON, "STET_COMMIT_KEEPS": "off"}
        assert status(root, env=off)[h["id"]]["status"] == "pending", "the caller's environment"
        got = status(root, env=residents.ON)[h["id"]]
        assert (got["status"], got["decidedBy"], got["commit"]) == ("applied", "commit", head(root))
        assert len(commit_ops(root)) == 1
    finally:
        residents.stop(root)


async def test_an_editors_server_shows_what_a_commit_kept_while_it_runs(tmp_path):
    """The developer commits from the editor's terminal while the editor's server runs: the
    server notices HEAD moved on its own (no other Stet process, no request) and shows the
    hunk accepted by that commit."""
    import asyncio
    import time

    from support.harness import Session

    root = repo(tmp_path)
    h = kept(root, "a.py", "line 3\n", "AGENT 3\n")
    editor = Session(root)
    await editor.start()
    try:
        since = len(editor.changed)
        await asyncio.to_thread(commit_all, root, "the agent's change")
        sha = head(root)
        deadline = time.monotonic() + 60
        while not any(
            x["id"] == h["id"] and x["status"] == "applied" and x.get("commit") == sha
            for c in editor.changed[since:]
            for x in c["hunks"]
        ):
            assert time.monotonic() < deadline, "the editor never showed the commit's accept"
            await asyncio.sleep(0.05)
        assert len(commit_ops(root)) == 1
    finally:
        await editor.stop()


def test_the_human_outputs_say_which_commit_accepted_it(tmp_path):
    """`stet status` and `stet show` say "accepted by commit abc1234", as the editor's view does,
    and the agent's name when the proposal gave one."""
    root = repo(tmp_path)
    assert stet("snapshot", "a.py", cwd=root).returncode == 0
    (root / "a.py").write_text(BASE.replace("line 3\n", "AGENT 3\n"))
    (h,) = stet_json("capture", "--keep", "--agent", "codex", cwd=root)["hunks"]
    assert h["agent"] == "codex"
    commit_all(root, "kept")
    sha = head(root)
    table = stet("status", "--all", cwd=root).stdout
    row = next(line for line in table.splitlines() if h["id"] in line)
    assert f"accepted by commit {sha[:7]}" in row and "codex" in row, table
    first = stet("show", h["id"], cwd=root).stdout.splitlines()[0]
    assert f"applied · accepted by commit {sha[:7]} · proposed by codex" in first, first
