"""`stet capture`, snapshots and `stet run` with real git repositories and real processes: an
agent that writes files itself (edits, creates, deletes, renames, runs a test), captured in
place, with --keep, and from a worktree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.capturetools import (
    AGENT,
    B_BASE,
    OLD,
    agent_repo,
    captures,
    duplicates,
    hunks,
    kept_contents,
    kinds,
    review_summary,
)
from support.clitools import commit_all, git, make_repo, snapshot, stet, stet_json
from support.scripted_agent import A_BASE, EDITS, NEW_PY, R_BASE, S_TEXT

ROUND1 = {
    ("edit", "a.py", "pending"): 3,
    ("create", "new.py", "pending"): 1,
    ("delete", "old.txt", "pending"): 1,
    ("rename", "r.txt", "pending"): 1,
    ("edit", "r.txt", "pending"): 1,
}
# Kept in the files, a rename is done: the renamed file's edit is where the file is now.
ROUND1_KEPT = {**{k: v for k, v in ROUND1.items() if k[:2] != ("edit", "r.txt")}, ("edit", "s.txt", "pending"): 1}


def agent(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*AGENT, *args], cwd=root, capture_output=True, text=True)


def tally(hs: list[dict]) -> dict:
    out: dict = {}
    for k in kinds(hs):
        out[k] = out.get(k, 0) + 1
    return out


def by_change(hs: list[dict]) -> dict:
    """hunk id by (old text, new text) of the a.py edits, and by kind for file operations."""
    out = {}
    for h in hs:
        out[(h["oldText"], h["newText"]) if h["kind"] == "edit" else (h["kind"], Path(h["uri"]).name)] = h["id"]
    return out


@pytest.fixture
def repo(tmp_path):
    return agent_repo(tmp_path / "repo")


def test_capture_in_place_proposes_every_kind_of_change_and_puts_the_baseline_back(repo):
    before = snapshot(repo)
    assert agent(repo, "1").returncode == 0
    after_agent = snapshot(repo)
    answer = stet_json("capture", cwd=repo)
    assert answer["baseline"] == "index" and answer["refused"] == [] and answer["left"] == []
    assert tally(answer["hunks"]) == ROUND1
    rename = next(h for h in answer["hunks"] if h["kind"] == "rename")
    assert Path(rename["newUri"]).name == "s.txt"  # git's rename detection: not a delete and a create
    assert snapshot(repo) == before, "the files have their baseline back"
    assert captures(repo / ".stet" / "stet.db") == [(answer["proposalId"], "done")]

    # Capturing again adds nothing: the files are the baseline now.
    stored = review_summary(repo / ".stet" / "stet.db")
    again = stet_json("capture", cwd=repo)
    assert again["proposalId"] is None and again["hunks"] == []
    assert review_summary(repo / ".stet" / "stet.db") == stored

    # Accepting everything gives exactly what the agent wrote.
    assert stet("accept", "--proposal", answer["proposalId"], cwd=repo).returncode == 0
    assert snapshot(repo) == after_agent
    assert {h["status"] for h in hunks(repo)} == {"applied"}
    # ... and a capture now finds nothing: accepted work is never captured (or taken out) again.
    assert stet_json("capture", cwd=repo)["proposalId"] is None
    assert snapshot(repo) == after_agent


def test_keep_leaves_the_agent_version_and_the_review_decides(repo):
    assert agent(repo, "1").returncode == 0
    after_agent = snapshot(repo)
    answer = stet_json("capture", "--keep", "-m", "round 1", cwd=repo)
    assert tally(answer["hunks"]) == ROUND1_KEPT
    assert snapshot(repo) == after_agent, "--keep writes nothing"
    assert all(h["kept"] and h["inFile"] is True for h in answer["hunks"])
    ids = by_change(answer["hunks"])
    # The range of a kept hunk is where its new text is.
    limit = next(h for h in answer["hunks"] if h["newText"] == EDITS["limit"][1])
    assert limit["range"]["start"]["line"] == 0

    # Reject puts the baseline back, exactly there; accept keeps the agent's text, writing nothing.
    main_old, main_new = EDITS["main"]
    r = stet_json("reject", ids[EDITS["main"]], "--feedback", "keep world", cwd=repo)
    assert r["hunks"][0]["status"] == "rejected" and "kept" not in r["hunks"][0]
    a = stet_json("accept", ids[EDITS["limit"]], ids[("create", "new.py")], cwd=repo)
    assert [h["status"] for h in a["hunks"]] == ["applied", "applied"]
    text = (repo / "a.py").read_text()
    assert main_old in text and main_new not in text and EDITS["limit"][1] in text and EDITS["greet"][1] in text
    assert (repo / "new.py").read_text() == NEW_PY
    # File operations: rejecting the delete brings the file back, the rename moves it back.
    stet_json("reject", ids[("delete", "old.txt")], ids[("rename", "r.txt")], cwd=repo)
    assert (repo / "old.txt").read_text() == OLD
    assert (repo / "r.txt").read_text() == S_TEXT and not (repo / "s.txt").exists()
    # Undo of a rejected kept hunk: an ordinary pending hunk (the old text is in the file).
    u = stet_json("undo", ids[EDITS["main"]], cwd=repo)["hunks"][0]
    assert u["status"] == "pending" and "kept" not in u and u["inFile"] is None
    assert stet_json("accept", ids[EDITS["main"]], cwd=repo)["hunks"][0]["status"] == "applied"
    assert main_new in (repo / "a.py").read_text()

    # Nothing left to capture: every change is decided, and capturing adds nothing.
    stored = review_summary(repo / ".stet" / "stet.db")
    assert stet_json("capture", "--keep", cwd=repo)["proposalId"] is None
    assert review_summary(repo / ".stet" / "stet.db") == stored


def test_keep_twice_proposes_only_the_new_part_and_merges_what_changed(repo):
    (repo / "a.py").write_text(A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    first = stet_json("capture", "--keep", cwd=repo)
    assert len(first["hunks"]) == 1
    stored = review_summary(repo / ".stet" / "stet.db")
    assert stet_json("capture", "--keep", cwd=repo)["proposalId"] == first["proposalId"]  # a replay
    assert review_summary(repo / ".stet" / "stet.db") == stored, "the same capture again adds nothing"
    # The agent changes its own line again and another one: one new hunk for the other line, and
    # the changed line's hunk is replaced (its text is not in the file any more).
    (repo / "a.py").write_text(A_BASE.replace("LIMIT = 10", "LIMIT = 30").replace("world", "there"))
    second = stet_json("capture", "--keep", cwd=repo)
    news = sorted(h["newText"] for h in second["hunks"])
    assert news == ['    print(shout("there"))\n', "LIMIT = 30\n"]
    states = {h["id"]: h["status"] for h in hunks(repo)}
    assert states[first["hunks"][0]["id"]] == "superseded"
    assert duplicates(hunks(repo)) == []
    # Rejecting the replacement restores the original line, not the first version.
    hid = next(h["id"] for h in second["hunks"] if h["newText"] == "LIMIT = 30\n")
    stet_json("reject", hid, cwd=repo)
    assert (repo / "a.py").read_text().startswith("LIMIT = 10\n")


def test_binary_symlinks_own_folders_and_other_paths_are_left_alone(repo):
    (repo / "a.py").write_text(A_BASE.replace("world", "there"))
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01binary")
    os.symlink("a.py", repo / "link.py")
    # Only the paths given are captured; b.txt is not touched.
    one = stet_json("capture", "a.py", cwd=repo)
    assert [Path(h["uri"]).name for h in one["hunks"]] == ["a.py"]
    assert (repo / "a.py").read_text() == A_BASE and (repo / "b.txt").read_text() == B_BASE + "delta\n"
    # Everything: b.txt captured; the binary file and the symlink refused, named, left as they are.
    p = stet("capture", cwd=repo)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "blob.bin: binary or not UTF-8" in p.stderr and "link.py" in p.stderr and "symlink" in p.stderr
    assert (repo / "b.txt").read_text() == B_BASE
    assert (repo / "blob.bin").read_bytes() == b"\x00\x01binary" and os.readlink(repo / "link.py") == "a.py"
    # Stet's and git's own folders, and paths outside the workspace, are refused whole.
    for bad in (".stet/stet.db", ".git/config", "../elsewhere"):
        p = stet("capture", bad, cwd=repo)
        assert p.returncode == 2 and "OutsideWorkspace" in p.stderr, (bad, p.stderr)


def test_a_snapshot_attributes_to_the_agent_only_what_it_changed(repo):
    # The developer has work in progress nobody committed; then the agent starts.
    (repo / "b.txt").write_text(B_BASE.replace("beta", "beta (mine)"))
    assert stet("task", "start", "Round 1", "--id", "t1", "--snapshot", cwd=repo).returncode == 0
    assert len(kept_contents(repo)) >= 5
    assert agent(repo, "1").returncode == 0
    answer = stet_json("capture", "--task", "t1", cwd=repo)
    assert answer["baseline"] == "snapshot" and tally(answer["hunks"]) == ROUND1
    assert (repo / "b.txt").read_text() == B_BASE.replace("beta", "beta (mine)"), "the developer's text stays"
    assert {h["taskId"] for h in answer["hunks"]} == {"t1"}
    # The snapshot was used up by the capture: its contents are collected.
    assert kept_contents(repo) == []
    # A task's snapshot goes when the task ends.
    stet("task", "start", "Round 2", "--id", "t2", "--snapshot", cwd=repo)
    assert len(kept_contents(repo)) > 0
    assert stet("task", "done", "t2", cwd=repo).returncode == 0
    assert kept_contents(repo) == []
    assert [f for _, _, files in os.walk(repo / ".stet" / "snapshots") for f in files] == [], "no pack left"


def test_base_ref_and_exact_bytes(tmp_path):
    root = make_repo(tmp_path / "r")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (root / "tail.txt").write_bytes(b"a\nb")
    commit_all(root)
    (root / "crlf.txt").write_bytes(b"one\r\nTWO\r\nthree\r\n")
    (root / "tail.txt").write_bytes(b"a\nB")
    git("add", "-A", cwd=root)  # staged: against the index there is nothing to capture
    assert stet_json("capture", cwd=root)["proposalId"] is None
    answer = stet_json("capture", "--base", "HEAD", cwd=root)
    assert len(answer["hunks"]) == 2 and answer["baseline"] == "HEAD"
    assert (root / "crlf.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\n" and (
        root / "tail.txt"
    ).read_bytes() == b"a\nb"
    stet("accept", "--proposal", answer["proposalId"], cwd=root)
    assert (root / "crlf.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n" and (
        root / "tail.txt"
    ).read_bytes() == b"a\nB"


def test_stet_run_passes_the_exit_code_and_leaves_the_output_untouched(repo):
    p = stet("run", "--", "sh", "-c", "printf 'out\\n'; echo err >&2; echo x > made.txt; exit 7", cwd=repo)
    assert p.returncode == 7 and p.stdout == "out\n"
    assert "err" in p.stderr and "1 hunk(s)" in p.stderr
    assert not (repo / "made.txt").exists()
    p = stet("run", "--task", "t", "--", *AGENT, "1", cwd=repo)
    assert p.returncode == 0, p.stderr
    assert "agent round 1: done" in p.stdout and "check: ok" in p.stdout
    assert tally(hunks(repo, "--task", "t")) == ROUND1
    assert (repo / "a.py").read_text() == A_BASE and (repo / "r.txt").read_text() == R_BASE
    p = stet("run", "--", "no-such-agent-command", cwd=repo)
    assert p.returncode == 127 and "command not found" in p.stderr


@pytest.mark.parametrize("commits", [False, True], ids=["writes", "commits-like-aider"])
def test_stet_run_in_a_worktree_never_touches_the_developers_files(repo, commits):
    # The developer accepted a change earlier (applied, not committed): the agent starts from it.
    (repo / "b.txt").write_text(B_BASE.replace("gamma", "GAMMA"))
    first = stet_json("capture", cwd=repo)
    stet("accept", first["hunks"][0]["id"], cwd=repo)
    before = snapshot(repo)
    # While the agent works, the developer edits a file the agent also changes (another line).
    mine = A_BASE.replace("def shout(name):", "def shout(name):  # developer note")
    args = [*AGENT, "1", "--expect=b.txt=GAMMA", f"--also={repo}/a.py={mine}"] + (["--commit"] if commits else [])
    p = stet("run", "--worktree", "--task", "w", "--", *args, cwd=repo)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "the agent works in" in p.stderr and "kept" not in p.stderr
    now = snapshot(repo)
    assert {k: v for k, v in now.items() if k != "a.py"} == {k: v for k, v in before.items() if k != "a.py"}
    assert now["a.py"] == mine.encode()
    assert tally(hunks(repo, "--task", "w")) == ROUND1
    # Accepting everything gives the agent's work carried onto the developer's file.
    stet("accept", "--task", "w", cwd=repo)
    text = (repo / "a.py").read_text()
    assert "LIMIT = 20" in text and "# developer note" in text and (repo / "s.txt").read_text() == S_TEXT
    assert len(git("worktree", "list", cwd=repo).splitlines()) == 1, "the worktree is gone"


def test_stet_run_in_a_worktree_keeps_it_when_the_developer_changed_the_same_lines(repo):
    p = stet("run", "--worktree", "--", *AGENT, "1", f"--also={repo}/a.py=LIMIT = 99\n", cwd=repo)
    assert p.returncode == 1, "the agent succeeded, but a file could not be carried over"
    assert "a.py: changed by the agent and, meanwhile, in the workspace in the same lines" in p.stderr
    kept = p.stderr.split("the worktree is kept at ")[1].split(" ")[0]
    assert os.path.isdir(kept) and "LIMIT = 20" in Path(kept, "a.py").read_text()
    assert (repo / "a.py").read_text() == "LIMIT = 99\n", "the developer's text stays"
    assert "a.py" not in {Path(h["uri"]).name for h in hunks(repo)}
    assert len(hunks(repo)) == 4  # the create, the delete, the rename and its edit
    git("worktree", "remove", "--force", kept, cwd=repo)


def test_run_json_of_capture_names_the_baseline(repo):
    (repo / "b.txt").write_text("changed\n")
    out = json.loads(stet("capture", "--json", "--id", "mine", cwd=repo).stdout)
    assert out["proposalId"] == "mine" and out["baseline"] == "index"
    # The same id for another change is refused, and nothing is written.
    (repo / "b.txt").write_text("changed again\n")
    p = stet("capture", "--id", "mine", cwd=repo)
    assert p.returncode == 1 and "Conflict" in p.stderr
    assert (repo / "b.txt").read_text() == "changed again\n"


STANDIN = """#!/bin/sh
# A stand-in for the real {name}: records its arguments, then works like a coding agent.
printf '%s\\n' "$@" > "$STANDIN_LOG/{name}.args"
exec {agent} 1 {extra}
"""
RECIPES = {  # the command lines of docs/cli.md, "Recipes: agents that write files"
    "codex": ["codex", "exec", "--sandbox", "workspace-write", "add input validation to signup()"],
    "gemini": ["gemini", "--approval-mode=auto_edit", "-p", "add input validation to signup()"],
    "aider": ["aider", "--no-auto-commits", "--no-dirty-commits", "--yes", "-m", "add input validation", "a.py"],
}
MESSAGES = {  # the hunks' default message: the agent, and what it was asked
    "codex": "codex: add input validation to signup()",
    "gemini": "gemini: add input validation to signup()",
    "aider": "aider: add input validation",
}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_documented_recipes_under_stet_run(repo, tmp_path, name):
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.mkdir()
    script = bin_dir / name
    script.write_text(STANDIN.format(name=name, agent=" ".join(AGENT), extra=""))
    script.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "STANDIN_LOG": str(log)}
    p = stet("run", "--task", name, "--", *RECIPES[name], cwd=repo, env=env, input="")
    assert p.returncode == 0, p.stderr
    assert (log / f"{name}.args").read_text().splitlines() == RECIPES[name][1:], "arguments passed as written"
    assert tally(hunks(repo, "--task", name)) == ROUND1
    assert {h["message"] for h in hunks(repo, "--task", name)} == {MESSAGES[name]}
    assert (repo / "a.py").read_text() == A_BASE


def test_the_default_message_is_the_agent_and_what_it_was_asked(repo, tmp_path):
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.mkdir()
    (bin_dir / "claude").write_text(STANDIN.format(name="claude", agent=" ".join(AGENT), extra=""))
    (bin_dir / "claude").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "STANDIN_LOG": str(log)}
    p = stet("run", "--task", "c", "--", "claude", "-p", "fix the login bug", cwd=repo, env=env, input="")
    assert p.returncode == 0, p.stderr
    assert {h["message"] for h in hunks(repo, "--task", "c")} == {"claude: fix the login bug"}
    # A script run by its interpreter, by a relative path: the script's name.
    (tmp_path / "agent.py").write_text(Path(AGENT[1]).read_text())
    p = stet("run", "--task", "d", "--", sys.executable, "../agent.py", "1", cwd=repo, input="")
    assert p.returncode == 0, p.stderr
    assert {h["message"] for h in hunks(repo, "--task", "d")} == {"agent.py"}
    # Given: as given.
    p = stet("run", "--task", "e", "-m", "my words", "--", sys.executable, "../agent.py", "1", cwd=repo, input="")
    assert {h["message"] for h in hunks(repo, "--task", "e")} == {"my words"}


def test_aider_committing_in_a_worktree(repo, tmp_path):
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.mkdir()
    (bin_dir / "aider").write_text(STANDIN.format(name="aider", agent=" ".join(AGENT), extra="--commit"))
    (bin_dir / "aider").chmod(0o755)
    head = git("rev-parse", "HEAD", cwd=repo)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "STANDIN_LOG": str(log)}
    p = stet(
        "run", "--task", "a", "--worktree", "--", "aider", "--yes", "-m", "add input validation", cwd=repo, env=env
    )
    assert p.returncode == 0, p.stderr
    assert tally(hunks(repo, "--task", "a")) == ROUND1
    assert git("rev-parse", "HEAD", cwd=repo) == head, "its commits stayed in the worktree"


def test_doctor_tells_of_snapshots_kept_hunks_and_left_worktrees(repo):
    (repo / "b.txt").write_text("changed\n")
    stet_json("capture", "--keep", cwd=repo)
    stet("snapshot", "--all", "--task", "later", cwd=repo)
    p = stet("run", "--worktree", "--", "sh", "-c", "echo x > b.txt; exit 3", cwd=repo)
    assert p.returncode == 3 and "the worktree is kept at" in p.stderr
    kept = p.stderr.split("the worktree is kept at ")[1].split(" ")[0]
    p = stet("doctor", "--json", cwd=repo)
    assert p.returncode == 1, "a worktree left is something to attend to"
    report = json.loads(p.stdout)
    what = [f["what"] for f in report["findings"]]
    assert any("snapshot (the whole workspace" in w and "task later" in w for w in what)
    assert not any("no longer in the file on disk" in w for w in what), "a kept hunk's text is its new text"
    assert any(kept in w and f["level"] == "warn" for f, w in zip(report["findings"], what))
    git("worktree", "remove", "--force", kept, cwd=repo)


# An agent that runs Python writes bytecode beside the code (a test run does). Nobody asked to
# review it: capture leaves it out, as it leaves out what git ignores; a .pyc git tracks is a file.
BYTECODE_AGENT = (
    "import os, py_compile\n"
    "open('a.py', 'a').write('EXTRA = 1\\n')\n"
    "os.makedirs('pkg', exist_ok=True)\n"
    "open('pkg/mod.py', 'w').write('X = 1\\n')\n"
    "py_compile.compile('pkg/mod.py', doraise=True)\n"  # pkg/__pycache__/mod.cpython-3xx.pyc
    "open('old_style.pyc', 'wb').write(b'\\x00\\x01')\n"
    "open('tracked.pyc', 'wb').write(b'\\x00\\x02')\n"
)


@pytest.mark.parametrize("how", ["index", "snapshot-without-git", "worktree"])
def test_bytecode_a_run_leaves_is_not_captured_and_not_refused(tmp_path, how):
    root = tmp_path / "r"
    if how == "snapshot-without-git":
        root.mkdir()
        (root / "a.py").write_text(A_BASE)
        assert stet("snapshot", "--all", cwd=root).returncode == 0
    else:
        make_repo(root)
        (root / "a.py").write_text(A_BASE)
        (root / "tracked.pyc").write_bytes(b"\x00\x01")
        commit_all(root)
    (tmp_path / "agent.py").write_text(BYTECODE_AGENT)
    args = ["run", *(["--worktree"] if how == "worktree" else []), "--", sys.executable, "../agent.py"]
    p = stet(*args, cwd=root)  # (py_compile writes bytecode even under PYTHONDONTWRITEBYTECODE)
    files = sorted(h["uri"].removeprefix(root.as_uri() + "/") for h in hunks(root))
    if how == "snapshot-without-git":
        # Without git nothing is tracked: only the text the agent wrote is for review.
        assert p.returncode == 0, (p.stdout, p.stderr)
        assert files == ["a.py", "pkg/mod.py"], files
        assert "not captured" not in p.stderr and "binary" not in p.stderr, p.stderr
        return
    # The tracked .pyc the agent changed is still said, as any binary file is; nothing else is.
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert files == ["a.py", "pkg/mod.py"], files
    refused = [line for line in p.stderr.splitlines() if "binary or not UTF-8" in line]
    assert len(refused) == 1 and "tracked.pyc" in refused[0], p.stderr
    assert "__pycache__" not in p.stderr and "old_style.pyc" not in p.stderr, p.stderr
    if how == "worktree":  # kept: not everything could be proposed
        kept = p.stderr.split("the worktree is kept at ")[1].split(" ")[0]
        git("worktree", "remove", "--force", kept, cwd=root)
