"""One bad file operation never bricks the server.

The attacks, for real: accepted creates, renames and deletes whose folder became a symlink to
an outside folder, whose folder is blocked by a plain file, and whose disk is full (a small
tmpfs, where mounting is allowed); and the same failures met by a journaled effect at the
next start (the server killed after committing the decision). Each hunk becomes `stale` with
a `problem` that says why (or stays `accepted`, waiting, when the disk is full), nothing
outside changes, every request goes on being answered, recovery never raises, `stet doctor`
explains and `stet doctor --fix` never crashes."""

from __future__ import annotations

import os
import shutil
import sqlite3

from test_bad_store import fill, small_fs  # noqa: F401  (a fixture)

from support.clitools import stet
from support.flipper import fingerprint
from support.harness import rng, write
from support.rawlsp import Dead, RawServer


def create(ws, rel, text="made\n") -> list:
    u = (ws / rel).as_uri()
    return [
        {"kind": "create", "uri": u},
        {"textDocument": {"uri": u, "version": None}, "edits": [{"range": rng(0, 0, 0, 0), "newText": text}]},
    ]


def propose(s, pid, changes) -> list[dict]:
    return s.call("stet/propose", {"proposalId": pid, "edit": {"documentChanges": changes}})["hunks"]


def accept_all(s, pid) -> dict:
    return s.request(
        "workspace/executeCommand", {"command": "stet.acceptAll", "arguments": [{"proposalId": pid}]}, timeout=30
    )


def doctor(ws, *args) -> tuple[int, str]:
    p = stet("doctor", *args, cwd=ws)
    return p.returncode, p.stdout + p.stderr


def test_file_operations_blocked_by_symlinks_and_files_are_stale_with_a_reason(tmp_path):
    ws, out = tmp_path / "ws", tmp_path / "outside"
    write(ws / "a.py", "a\n")
    write(ws / "ops" / "old" / "y.txt", "y\n")
    write(out / "y.txt", "y\n")  # what a delete through the symlink would remove
    write(out / "keep.txt", "the user's\n")
    s = RawServer(ws)
    try:
        s.initialize()
        changes = [
            *create(ws, "ops/new/x.txt"),
            {"kind": "rename", "oldUri": (ws / "a.py").as_uri(), "newUri": (ws / "ops" / "new2" / "a.py").as_uri()},
            {"kind": "delete", "uri": (ws / "ops" / "old" / "y.txt").as_uri()},
        ]
        hunks = propose(s, "p", changes)
        assert len(hunks) == 3
        # The hostile agent: folders become symlinks out, or plain files, after the proposal.
        os.symlink(out, ws / "ops" / "new")
        write(ws / "ops" / "new2", "a plain file where a folder should be\n")
        shutil.rmtree(ws / "ops" / "old")
        os.symlink(out, ws / "ops" / "old")
        before = fingerprint(out)
        answer = accept_all(s, "p")
        assert "result" in answer, answer  # an answer, not an error after the commit
        states = {h["kind"]: h for h in answer["result"]["hunks"]}
        assert {k: h["status"] for k, h in states.items()} == {"create": "stale", "rename": "stale", "delete": "stale"}
        assert "symlink" in states["create"]["problem"], states["create"]
        assert "not a folder" in states["rename"]["problem"], states["rename"]
        assert "symlink" in states["delete"]["problem"], states["delete"]
        assert fingerprint(out) == before
        assert (ws / "a.py").read_text() == "a\n"
        # The server goes on: listing, an unrelated proposal and its accept.
        write(ws / "b.txt", "b\n")
        (h,) = s.call(
            "stet/propose",
            {
                "proposalId": "q",
                "edit": {"changes": {(ws / "b.txt").as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "B\n"}]}},
            },
        )["hunks"]
        assert accept_all(s, "q")["result"]["hunks"][0]["status"] == "applied"
        listed = {h["id"]: h for h in s.call("stet/listHunks", {})["hunks"]}
        assert listed[states["create"]["id"]]["problem"] == states["create"]["problem"]
    finally:
        s.kill()
    s = RawServer(ws)
    try:
        s.initialize()
        assert "error" not in s.restored, s.restored
        assert s.restored["counts"]["stale"] == 3 and s.alive()
    finally:
        s.kill()
    code, said = doctor(ws)
    assert code == 1 and "could not be carried out" in said and "symlink" in said and "Traceback" not in said, said
    code, said = doctor(ws, "--fix")
    assert "Traceback" not in said and "recovery ran" in said, said
    assert fingerprint(out) == before


def test_a_journaled_effect_that_fails_at_the_next_start_does_not_stop_recovery(tmp_path):
    ws, out = tmp_path / "ws", tmp_path / "outside"
    write(ws / "a.py", "a\n")
    out.mkdir()
    s = RawServer(ws, env={"STET_FAULT": "decide:after-commit"})
    s.initialize()
    propose(s, "p", create(ws, "ops/new/x.txt") + create(ws, "ops/blocked/z.txt"))
    try:
        accept_all(s, "p")
    except Dead:
        pass  # killed after committing the decision, before carrying it out
    s.kill()
    (ws / "ops").mkdir()
    os.symlink(out, ws / "ops" / "new")
    write(ws / "ops" / "blocked", "a file\n")
    s = RawServer(ws)
    try:
        s.initialize()
        assert "error" not in s.restored, s.restored  # recovery finished
        states = {h["uri"].rsplit("/", 1)[1]: h for h in s.call("stet/listHunks", {})["hunks"]}
        assert states["x.txt"]["status"] == states["z.txt"]["status"] == "stale", states
        assert "symlink" in states["x.txt"]["problem"] and "not a folder" in states["z.txt"]["problem"], states
        assert not os.listdir(out)
        # Every request is answered, unrelated ones included.
        assert s.request("stet/listHunks", {"status": ["pending"]})["result"] == {"hunks": []}
    finally:
        s.kill()
    code, said = doctor(ws, "--fix")
    assert "Traceback" not in said and "could not be carried out" in said, said
    # Once the way is clear, the operation can be proposed again (pending), never carried out by itself.
    os.unlink(ws / "ops" / "new")
    s = RawServer(ws)
    try:
        s.initialize()
        states = {h["uri"].rsplit("/", 1)[1]: h for h in s.call("stet/listHunks", {})["hunks"]}
        assert states["x.txt"]["status"] == "pending" and "problem" not in states["x.txt"], states
        assert not (ws / "ops" / "new").exists()
    finally:
        s.kill()


def test_file_operations_on_a_full_disk_wait_and_are_carried_out_once_there_is_room(small_fs, tmp_path):  # noqa: F811
    ws = small_fs / "ws"
    write(ws / "a.py", "a\n")
    env = {"STET_DB": str(tmp_path / "store" / "stet.db")}
    s = RawServer(ws, env=env)
    try:
        s.initialize()
        big = "x" * 200_000 + "\n"
        hunks = propose(s, "p", create(ws, "made/big.txt", big) + create(ws, "big2.txt", big))
        fill(small_fs)
        answer = accept_all(s, "p")
        assert "result" in answer, answer
        for h in answer["result"]["hunks"]:
            assert h["status"] == "accepted" and "No space left" in h["problem"], h
        assert s.alive()
        assert not [n for n in os.listdir(ws) if "stet-tmp" in n]
    finally:
        s.kill()
    s = RawServer(ws, env=env)  # still full: recovery tries, waits, and lets every request through
    try:
        s.initialize()
        assert "error" not in s.restored, s.restored
        assert {h["status"] for h in s.call("stet/listHunks", {})["hunks"]} == {"accepted"}
    finally:
        s.kill()
    (small_fs / "filler").unlink()
    s = RawServer(ws, env=env)
    try:
        s.initialize()
        states = s.call("stet/listHunks", {})["hunks"]
        assert {h["status"] for h in states} == {"applied"} and not any("problem" in h for h in states), states
        assert (ws / "made" / "big.txt").read_text() == big and (ws / "big2.txt").read_text() == big
        assert len(hunks) == 2
    finally:
        s.kill()


def test_a_hunk_an_older_stet_stored_under_git_is_never_carried_out(tmp_path):
    """Stores made before `.git/` was refused may hold such hunks, even accepted ones with their
    effect journaled: the effect makes them stale at the next start, and writes nothing."""
    ws = tmp_path / "ws"
    write(ws / "a.py", "a\n")
    (ws / ".git").mkdir()
    s = RawServer(ws, env={"STET_FAULT": "decide:after-commit"})
    s.initialize()
    propose(s, "p", create(ws, "planted.txt", "#!/bin/sh\n"))
    try:
        accept_all(s, "p")
    except Dead:
        pass  # killed after committing the decision, before carrying it out
    s.kill()
    # (as the store keeps paths: relative to the root, docs/protocol.md "Paths in the store")
    old, new = "stet-repo:///planted.txt", "stet-repo:///.git/hooks/post-checkout"
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    with con:  # what an older Stet would have stored
        con.execute("UPDATE hunks SET uri = ? WHERE uri = ?", (new, old))
        con.execute("UPDATE effects SET uri = ?, edits = replace(edits, ?, ?)", (new, old, new))
    con.close()
    s = RawServer(ws)
    try:
        s.initialize()
        assert "error" not in s.restored, s.restored
        (h,) = s.call("stet/listHunks", {})["hunks"]
        assert h["status"] == "stale" and "own folder" in h["problem"], h
        assert not (ws / ".git" / "hooks").exists() and not (ws / "planted.txt").exists() and s.alive()
    finally:
        s.kill()
