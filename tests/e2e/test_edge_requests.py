"""The smaller holes, each attacked for real.

- `$/cancelRequest` sent right after `stet.accept` / `stet/propose`: the answer is the result
  (it was RequestCancelled 60 times in 60 although every one was committed and written);
- a second `initialize` with other roots: refused (-32600), nothing changes, no store made;
- rewriting a closed file keeps its owner, group, mode and extended attributes, and a file
  with hard links is never split from them (its hunk is stale, saying why);
- `stet status --db NOTES.txt` (any file that is not a Stet store): exit 2, the file left as it
  was, nothing quarantined or created; a damaged store is reported by a read-only command,
  moved aside only by `stet doctor --fix`;
- a NUL byte in a patch or a newText, and `-p -1`, are refused.
(The start-up sweep sparing `.draft.stet-tmp-notes`: tests/crash/test_crash.py; `.stet/` 0700:
tests/e2e/test_inbox_hostile_files.py.)"""

from __future__ import annotations

import json
import os
import sqlite3
import stat

from support.clitools import stet
from support.harness import rng, write
from support.rawlsp import RawServer

A = "".join(f"line {i}\n" for i in range(40))


def test_cancel_after_a_mutation_answers_its_result(tmp_path):
    ws = tmp_path / "ws"
    f = write(ws / "a.txt", A)
    s = RawServer(ws)
    try:
        s.initialize()
        edits = [{"range": rng(i, 0, i + 1, 0), "newText": f"NEW {i}\n"} for i in range(0, 40, 2)]
        msg = {"proposalId": "p", "edit": {"changes": {f.as_uri(): edits}}}
        s.send({"jsonrpc": "2.0", "id": "prop", "method": "stet/propose", "params": msg})
        s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "prop"}})
        hunks = s.wait_answer("prop")["result"]["hunks"]
        for n, h in enumerate(hunks):
            rid = f"acc{n}"
            args = [{"hunkIds": [h["id"]]}]
            s.send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "workspace/executeCommand",
                    "params": {"command": "stet.accept", "arguments": args},
                }
            )
            s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}})
            answer = s.wait_answer(rid)
            assert answer.get("result", {}).get("hunks", [{}])[0].get("status") == "applied", answer
        text = f.read_text()
        assert all(text.count(h["newText"]) == 1 for h in hunks)
    finally:
        s.kill()


def test_a_second_initialize_is_refused_and_changes_nothing(tmp_path):
    ws, other = tmp_path / "ws", tmp_path / "other"
    f = write(ws / "a.txt", A)
    write(other / "b.txt", "b\n")
    s = RawServer(ws)
    try:
        s.initialize()
        u = other.resolve().as_uri()
        answer = s.request(
            "initialize",
            {"processId": None, "rootUri": u, "workspaceFolders": [{"uri": u, "name": "o"}], "capabilities": {}},
        )
        assert answer["error"]["code"] == -32600, answer
        assert not (other / ".stet").exists()
        edit = {"changes": {f.as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "X\n"}]}}
        assert len(s.call("stet/propose", {"proposalId": "p", "edit": edit})["hunks"]) == 1  # same review
        edit = {"changes": {(other / "b.txt").resolve().as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "B\n"}]}}
        assert s.request("stet/propose", {"proposalId": "q", "edit": edit})["error"]["code"] == -32003
    finally:
        s.kill()


def test_rewriting_a_file_keeps_owner_mode_and_attributes_and_never_splits_hard_links(tmp_path):
    ws = tmp_path / "ws"
    kept = write(ws / "kept.txt", A)
    os.chmod(kept, 0o640)
    mine = os.geteuid() == 0
    if mine:  # as root (CI), the file belongs to someone else, as a developer's would
        os.chown(kept, 1234, 2345)
    os.setxattr(kept, "user.origin", b"the developer's tag")
    linked = write(ws / "linked.txt", A)
    os.link(linked, ws / "other-name.txt")
    before = os.stat(kept)
    patch = (
        "--- a/kept.txt\n+++ b/kept.txt\n@@ -1 +1 @@\n-line 0\n+LINE ZERO\n"
        "--- a/linked.txt\n+++ b/linked.txt\n@@ -1 +1 @@\n-line 0\n+LINE ZERO\n"
    )
    p = stet("propose", "--patch", "-", "--id", "p", "--json", cwd=ws, input=patch)
    assert p.returncode == 0, p.stderr
    p = stet("accept", "--proposal", "p", "--json", cwd=ws)
    # The hard-linked file's hunk could not be written: the accept says so (exit 1).
    assert p.returncode == 1 and "hard link" in p.stderr, p.stderr
    after = os.stat(kept)
    assert kept.read_text().startswith("LINE ZERO\n")
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (
        before.st_uid,
        before.st_gid,
        stat.S_IMODE(before.st_mode),
    )
    assert os.getxattr(kept, "user.origin") == b"the developer's tag"
    # The hard-linked file: untouched, both names still one file, the hunk says why.
    assert linked.read_text() == A and os.stat(linked).st_ino == os.stat(ws / "other-name.txt").st_ino
    status = stet("status", "--all", "--json", cwd=ws)
    (h,) = [h for h in json.loads(status.stdout)["hunks"] if h["uri"].endswith("/linked.txt")]
    assert h["status"] == "stale" and "hard links" in h["problem"], h


def test_a_file_that_is_not_a_stet_store_is_never_moved_or_made_into_one(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "a.txt", A)
    notes = write(ws / "NOTES.txt", "my notes, not a database\n")
    foreign = ws / "app.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE users (name)")
    con.commit()
    con.close()
    snapshot = {p: (p.read_bytes(), p.stat().st_ino) for p in (notes, foreign)}
    for path in (notes, foreign):
        for args in (("status",), ("log",), ("export",), ("doctor",), ("accept", "h1")):
            p = stet(*args, "--db", str(path), cwd=ws)
            assert p.returncode == 2 and "not a Stet review store" in p.stderr, (args, p.stdout, p.stderr)
        p = stet(
            "propose",
            "--db",
            str(path),
            "--patch",
            "-",
            cwd=ws,
            input="--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 0\n+X\n",
        )
        assert p.returncode == 2, p.stderr
    assert {p: (p.read_bytes(), p.stat().st_ino) for p in snapshot} == snapshot
    assert not list(ws.rglob("quarantine")) and not (ws / ".stet").exists()
    # A damaged store of Stet's own: a read-only command says so and moves nothing; doctor --fix does.
    db = ws / ".stet" / "stet.db"
    write(db, "garbage, once a store")
    p = stet("status", cwd=ws)
    assert p.returncode == 2 and "damaged" in p.stderr and "doctor --fix" in p.stderr, p.stderr
    assert db.read_text() == "garbage, once a store" and not (ws / ".stet" / "quarantine").exists()
    p = stet("doctor", "--fix", cwd=ws)
    assert "Traceback" not in p.stderr and list((ws / ".stet" / "quarantine").iterdir()), p.stdout + p.stderr


def test_nul_bytes_and_negative_strips_are_refused(tmp_path):
    ws = tmp_path / "ws"
    f = write(ws / "a.txt", A)
    for patch in (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 0\n+li\x00ne\n",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 0\n+line 0 \x00\n",
    ):
        p = stet("propose", "--patch", "-", cwd=ws, input=patch)
        assert p.returncode == 2 and "NUL" in p.stderr, p.stderr
    ok = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 0\n+X\n"
    for strip in ("-1", "-5", "x"):
        p = stet("propose", "--patch", "-", "-p", strip, cwd=ws, input=ok)
        assert p.returncode == 2 and "path components" in p.stderr, p.stderr
    assert not (ws / ".stet").exists() or stet("status", "--all", "--json", cwd=ws).stdout.count('"id"') == 0
    s = RawServer(ws)
    try:
        s.initialize()
        edit = {"changes": {f.as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "bin\x00ary\n"}]}}
        answer = s.request("stet/propose", {"proposalId": "nul", "edit": edit})
        assert answer["error"]["code"] == -32602 and "NUL" in answer["error"]["message"], answer
        assert s.call("stet/listHunks", {})["hunks"] == []
    finally:
        s.kill()
