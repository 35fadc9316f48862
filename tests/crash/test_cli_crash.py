"""The CLI killed with SIGKILL at named points: the decision survives, the edit lands exactly once."""

from __future__ import annotations

import signal
import sqlite3

import pytest

from support.clitools import commit_all, db_summary, make_repo, stet, stet_json

BASE = b"".join(b"line %d\n" % i for i in range(1, 21))


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "a.txt").write_bytes(BASE)
    commit_all(root)
    return root


def propose_one(root) -> str:
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -5 +5,2 @@\n-line 5\n+LINE FIVE\n+inserted after five\n"
    (h,) = stet_json("propose", "--patch", "-", "--id", "p1", cwd=root, input=diff)["hunks"]
    return h["id"]


@pytest.mark.parametrize(
    "point", ["decide:after-commit", "effect:before-write", "effect:after-write", "effect:before-confirm"]
)
def test_accept_killed_then_finished_exactly_once(repo, point):
    hid = propose_one(repo)
    p = stet("accept", hid, cwd=repo, env={"STET_FAULT": point})
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr)
    conn = sqlite3.connect(repo / ".stet" / "stet.db")
    try:
        (status,) = conn.execute("SELECT status FROM hunks").fetchone()
    finally:
        conn.close()
    assert status == "accepted", "the decision was committed before the kill"
    # The next process that opens the store (any command, here a read) finishes the edit
    # exactly once, checking the content first; a second one changes nothing.
    assert stet_json("status", "--all", cwd=repo)["hunks"][0]["status"] == "applied"
    text = (repo / "a.txt").read_bytes()
    assert text == BASE.replace(b"line 5\n", b"LINE FIVE\ninserted after five\n")
    assert stet("doctor", cwd=repo).returncode == 0
    stet("doctor", "--fix", cwd=repo)
    assert (repo / "a.txt").read_bytes() == text
    assert text.count(b"inserted after five") == 1


def test_accept_replayed_after_kill_with_the_same_request_id(repo):
    hid = propose_one(repo)
    p = stet("accept", hid, "--request-id", "r-1", cwd=repo, env={"STET_FAULT": "effect:after-write"})
    assert p.returncode == -signal.SIGKILL
    # The agent retries the same call: it gets the recorded answer, nothing is done twice.
    again = stet_json("accept", hid, "--request-id", "r-1", cwd=repo)
    assert again["hunks"][0]["id"] == hid
    stet("doctor", "--fix", cwd=repo)
    assert (repo / "a.txt").read_bytes().count(b"inserted after five") == 1


def test_propose_killed_after_commit_then_retried(repo):
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -2 +2 @@\n-line 2\n+LINE TWO\n"
    p = stet("propose", "--patch", "-", "--id", "p9", cwd=repo, input=diff, env={"STET_FAULT": "propose:after-commit"})
    assert p.returncode == -signal.SIGKILL
    before = db_summary(repo / ".stet" / "stet.db")
    again = stet_json("propose", "--patch", "-", "--id", "p9", cwd=repo, input=diff)
    assert len(again["hunks"]) == 1
    assert db_summary(repo / ".stet" / "stet.db") == before, "the retry added nothing"
    assert (repo / "a.txt").read_bytes() == BASE


def _propose_letters(root) -> str:
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,4 @@\n-line 5\n-line 6\n-line 7\n+A\n+B\n+C\n+D\n"
    (h,) = stet_json("propose", "--patch", "-", "--id", "p2", cwd=root, input=diff)["hunks"]
    return h["id"]


@pytest.mark.parametrize(
    "point", ["split:after-commit", "effect:before-write", "effect:after-write", "effect:before-confirm"]
)
def test_accepted_part_killed_then_finished_exactly_once(repo, point):
    """Some lines accepted (old 1, new 1-2 of [l5, l6, l7] -> [A, B, C, D]), the CLI killed:
    the split was committed whole, the part's edit lands exactly once, the rest stays pending
    where the part put its old text, and the same request again answers the same split."""
    hid = _propose_letters(repo)
    args = ("accept", hid, "--old", "1", "--new", "1-2", "--request-id", "r-split")
    p = stet(*args, cwd=repo, env={"STET_FAULT": point})
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr)
    conn = sqlite3.connect(repo / ".stet" / "stet.db")
    try:
        rows = dict(conn.execute("SELECT status, COUNT(*) FROM hunks GROUP BY status").fetchall())
    finally:
        conn.close()
    assert rows == {"superseded": 1, "accepted": 1, "pending": 1}, "the split was committed whole before the kill"
    hunks = {h["id"]: h for h in stet_json("status", "--all", cwd=repo)["hunks"]}
    part_id, rest_id = hunks[hid]["parts"]
    assert hunks[part_id]["status"] == "applied" and hunks[rest_id]["status"] == "pending"
    want = BASE.replace(b"line 5\nline 6\nline 7\n", b"line 6\nline 7\nA\nB\n")
    assert (repo / "a.txt").read_bytes() == want
    again = stet_json(*args, cwd=repo)
    assert (again["part"]["id"], again["rest"]["id"]) == (part_id, rest_id)
    stet("doctor", "--fix", cwd=repo)
    assert (repo / "a.txt").read_bytes() == want, "nothing done twice"
    stet_json("accept", rest_id, cwd=repo)
    assert (repo / "a.txt").read_bytes() == BASE.replace(b"line 5\nline 6\nline 7\n", b"A\nB\nC\nD\n")
