"""No acknowledged decision is lost when the store is removed under a server.

The attacks, for real: the database deleted while a server runs (`rm`, and a real
`git clean -fdx` in a real repository), and only its `-wal` deleted. After that, the server
acknowledges nothing: a reject with feedback and an accept are answered StoreUnavailable
(-32005) saying what happened and what to do, no file is written, and the editor is told
(window/showMessage). What the server held is saved (a rescued copy beside the store, or the
WAL copied into the database) so that every decision acknowledged before is still there after
a restart; nothing starts an empty store in the old one's place while the server runs; and a
new store made meanwhile survives the old server's end."""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest

from support.clitools import commit_all, make_repo, stet
from support.harness import rng, write
from support.rawlsp import RawServer

A = "".join(f"line {i}\n" for i in range(10))


def propose(s, ws, pid, line) -> str:
    edit = {"changes": {(ws / "a.py").as_uri(): [{"range": rng(line, 0, line + 1, 0), "newText": f"NEW {line}\n"}]}}
    return s.call("stet/propose", {"proposalId": pid, "edit": edit})["hunks"][0]["id"]


def decide(s, command, hid, **extra) -> dict:
    return s.request("workspace/executeCommand", {"command": command, "arguments": [{"hunkIds": [hid], **extra}]})


def hunks_in(db) -> dict:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT id, status FROM hunks").fetchall())
    finally:
        con.close()


@pytest.mark.parametrize("how", ["rm", "git clean -fdx"])
def test_a_deleted_store_acknowledges_nothing_and_keeps_what_was_acknowledged(tmp_path, how):
    ws = make_repo(tmp_path / "ws")
    write(ws / "a.py", A)
    commit_all(ws)
    s = RawServer(ws)
    try:
        s.initialize()
        kept = propose(s, ws, "p1", 1)
        assert decide(s, "stet.reject", kept, feedback="not like this")["result"]["hunks"][0]["status"] == "rejected"
        h2, h3 = propose(s, ws, "p2", 3), propose(s, ws, "p3", 5)
        db = ws / ".stet" / "stet.db"
        if how == "rm":
            for suffix in ("", "-wal", "-shm"):
                os.unlink(f"{db}{suffix}")
        else:
            subprocess.run(["git", "clean", "-fdxq"], cwd=ws, check=True)
            assert not (ws / ".stet").exists()
        answers = [decide(s, "stet.reject", h2, feedback="no"), decide(s, "stet.accept", h3)]
        for answer in answers:
            assert answer["error"]["code"] == -32005, answer
            message = answer["error"]["message"]
            assert "deleted" in message and "acknowledges nothing" in message and "rescued" in message, message
        assert (ws / "a.py").read_text() == A, "a file was written for a decision nobody can keep"
        told = s.wait_note("window/showMessage", timeout=30)["message"]
        assert "deleted" in told, told
        assert s.request("stet/listHunks", {})["error"]["code"] == -32005
        assert not db.exists(), "an empty store was started in place of the deleted one"
        (rescued,) = [p for p in db.parent.iterdir() if p.name.startswith("stet.db.rescued-")]
        assert hunks_in(rescued)[kept] == "rejected"  # what was acknowledged is in the copy
    finally:
        s.kill()
    assert not db.exists()
    os.replace(rescued, db)  # what the message says to do
    s = RawServer(ws)
    try:
        s.initialize()
        states = {h["id"]: h for h in s.call("stet/listHunks", {})["hunks"]}
        assert states[kept]["status"] == "rejected" and states[kept]["feedback"] == "not like this"
        assert {states[h2]["status"], states[h3]["status"]} <= {"pending", "rejected", "accepted", "applied"}
        assert (ws / "a.py").read_text().count("NEW 5\n") == (states[h3]["status"] == "applied")
    finally:
        s.kill()


def test_a_deleted_wal_is_copied_into_the_store_before_anything_more_is_refused(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "a.py", A)
    s = RawServer(ws)
    try:
        s.initialize()
        kept = propose(s, ws, "p1", 1)  # acknowledged, and still only in the WAL
        db = ws / ".stet" / "stet.db"
        os.unlink(f"{db}-wal")
        answer = decide(s, "stet.accept", kept)
        assert answer["error"]["code"] == -32005 and "write-ahead log" in answer["error"]["message"], answer
        assert "copied everything" in answer["error"]["message"]
        assert (ws / "a.py").read_text() == A
        # The CLI now sees the store as it was, not a disk I/O error.
        p = stet("status", "--json", cwd=ws)
        assert p.returncode == 0 and kept in p.stdout, p.stdout + p.stderr
    finally:
        s.kill()  # SIGKILL: what was only in the deleted WAL would be gone now
    s = RawServer(ws)
    try:
        s.initialize()
        states = {h["id"]: h["status"] for h in s.call("stet/listHunks", {})["hunks"]}
        assert states[kept] in ("pending", "accepted", "applied"), states
    finally:
        s.kill()


def test_a_new_store_made_after_the_loss_survives_the_old_server(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "a.py", A)
    old = RawServer(ws)
    try:
        old.initialize()
        propose(old, ws, "p1", 1)
        db = ws / ".stet" / "stet.db"
        for suffix in ("", "-wal", "-shm"):
            os.unlink(f"{db}{suffix}")
        assert old.request("stet/listHunks", {})["error"]["code"] == -32005
        patch = "--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-line 2\n+TWO\n"
        p = stet("propose", "--patch", "-", "--id", "fresh", cwd=ws, input=patch)
        assert p.returncode == 0, p.stderr
        old.stop()  # a clean end: its connection to the deleted store is closed
    finally:
        old.kill()
    s = RawServer(ws)
    try:
        s.initialize()
        assert [h["proposalId"] for h in s.call("stet/listHunks", {})["hunks"]] == ["fresh"]
    finally:
        s.kill()
