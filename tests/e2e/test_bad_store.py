"""Bad stores and bad disks, for real: a full file system and a read-only one are small tmpfs
mounts (the tests run as root, as CI does; they are skipped where mounting is not allowed),
so SQLite and the file writes meet the kernel's own ENOSPC and EROFS, not a simulation.

The promises checked: a decision is acknowledged only when it is stored (an error otherwise,
-32005 StoreUnavailable saying what to do), the server keeps answering, nothing is
quarantined or deleted because a disk is full or read-only, and the work resumes when the
disk is writable again."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys

import pytest

from support.harness import rng, write
from support.rawlsp import RawServer

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "fs"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0755", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(mnt)], capture_output=True)
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(folder) -> int:
    """Fill the file system of `folder` to the last byte; returns the bytes written."""
    n = 0
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as f:
        for size in (1 << 20, 1 << 16, 1 << 12, 512, 1):
            while True:
                try:
                    n += f.write(b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    return n


def remount(mnt, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(mnt)], check=True)


def propose(s: RawServer, path, pid="p1", line=1) -> list[str]:
    edit = {"changes": {path.resolve().as_uri(): [{"range": rng(line, 0, line + 1, 0), "newText": f"NEW {line}\n"}]}}
    return [h["id"] for h in s.call("stet/propose", {"proposalId": pid, "edit": edit})["hunks"]]


def accept(s: RawServer, ids, rid=None) -> dict:
    return s.request(
        "workspace/executeCommand",
        {"command": "stet.accept", "arguments": [{"hunkIds": ids, "requestId": rid or f"acc-{ids[0]}"}]},
    )


def stored(db, hid) -> str | None:
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT status FROM hunks WHERE id = ?", (hid,)).fetchone()
        return row and row[0]
    finally:
        con.close()


def test_store_on_a_full_disk_acknowledges_nothing_and_resumes(small_fs, tmp_path):
    ws = small_fs / "ws"
    ws.mkdir()
    a = write(ws / "a.py", A_TEXT)
    s = RawServer(ws)
    try:
        s.initialize()
        h1 = propose(s, a, "p1", 1)
        h2 = propose(s, a, "p2", 5)
        fill(small_fs)
        answers = [
            accept(s, h1),
            s.request(
                "stet/propose",
                {
                    "proposalId": "p3",
                    "edit": {"changes": {a.resolve().as_uri(): [{"range": rng(8, 0, 9, 0), "newText": "X\n"}]}},
                },
            ),
        ]
        assert any("error" in answer for answer in answers), answers  # the disk really was full
        for answer in answers:
            if "error" in answer:  # not stored: not acknowledged, and the error says what to do
                assert answer["error"]["code"] == -32005, answer
                assert "disk" in answer["error"]["message"] and "full" in answer["error"]["message"]
        assert s.alive()
        (small_fs / "filler").unlink()  # space again
        again = accept(s, h2)
        assert again["result"]["hunks"][0]["status"] == "applied", again
        states = {h["id"]: h for h in s.call("stet/listHunks", {})["hunks"]}
    finally:
        s.kill()
    db = ws / ".stet" / "stet.db"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert not (ws / ".stet" / "quarantine").exists()
    # Whatever was acknowledged is stored; what was refused is not.
    if "result" in answers[0]:
        assert stored(db, h1[0]) in ("accepted", "applied")
    else:
        assert stored(db, h1[0]) == "pending" and states[h1[0]]["status"] == "pending"
    text = a.read_text()
    assert text.count("NEW 5\n") == 1 and text.count("NEW 1\n") == (0 if "error" in answers[0] else 1)


def test_read_only_store_answers_store_unavailable_and_is_left_alone(small_fs):
    ws = small_fs / "ws"
    ws.mkdir()
    a = write(ws / "a.py", A_TEXT)
    s = RawServer(ws)
    s.initialize()
    hid = propose(s, a)[0]
    s.stop()
    before = {p.name: p.read_bytes() for p in (ws / ".stet").iterdir() if p.is_file()}
    remount(small_fs, "ro")
    s = RawServer(ws)
    try:
        s.initialize()
        answer = accept(s, [hid])
        assert "error" in answer and answer["error"]["code"] == -32005, answer
        message = answer["error"]["message"]
        assert "read-only" in message or "writable" in message, message
        listed = s.request("stet/listHunks", {})  # reading may go on, or be refused: never silence
        assert (
            [h["id"] for h in listed["result"]["hunks"]] == [hid]
            if "result" in listed
            else (listed["error"]["code"] == -32005)
        )
    finally:
        s.kill()
    remount(small_fs, "rw")
    after = {p.name: p.read_bytes() for p in (ws / ".stet").iterdir() if p.is_file()}
    assert after == before and not (ws / ".stet" / "quarantine").exists()
    assert stored(ws / ".stet" / "stet.db", hid) == "pending"
    assert a.read_text() == A_TEXT


def test_store_folder_cannot_be_created(small_fs):
    ws = small_fs / "ws"
    ws.mkdir()
    write(ws / "a.py", A_TEXT)
    remount(small_fs, "ro")
    s = RawServer(ws)
    try:
        s.initialize()
        assert "error" in s.restored and "writable" in s.restored["error"]
        for method, params in (("stet/listHunks", {}), ("stet/propose", {"proposalId": "p", "edit": {"changes": {}}})):
            answer = s.request(method, params, timeout=30)
            assert answer["error"]["code"] == -32005 and "writable" in answer["error"]["message"], answer
    finally:
        s.kill()


def test_workspace_disk_full_keeps_the_decision_and_writes_later(small_fs, tmp_path):
    """The store is elsewhere; the workspace's disk is full when the accepted edit is written."""
    ws = small_fs / "ws"
    ws.mkdir()
    a = write(ws / "a.py", A_TEXT)
    db = tmp_path / "store" / "stet.db"
    s = RawServer(ws, env={"STET_DB": str(db)})
    try:
        s.initialize()
        hid = propose(s, a)[0]
        fill(small_fs)
        answer = accept(s, [hid])
        assert "result" in answer, answer  # the decision is stored: acknowledged
        assert answer["result"]["hunks"][0]["status"] == "accepted"
        assert a.read_text() == A_TEXT
        assert not [n for n in os.listdir(ws) if "stet-tmp" in n]
        assert s.alive()
    finally:
        s.kill()
    (small_fs / "filler").unlink()
    s = RawServer(ws, env={"STET_DB": str(db)})
    try:
        s.initialize()
        assert {h["id"]: h["status"] for h in s.call("stet/listHunks", {})["hunks"]} == {hid: "applied"}
        assert a.read_text().count("NEW 1\n") == 1
    finally:
        s.kill()


def test_recovery_that_cannot_write_still_answers_every_request(small_fs):
    """The store's disk is full when a restart has journaled work to finish: recovery cannot
    write, and every request must still be answered (-32005, saying what to do), never left
    waiting; once space is back, a restart finishes the work exactly once."""
    ws = small_fs / "ws"
    ws.mkdir()
    a = write(ws / "a.py", A_TEXT)
    s = RawServer(ws, env={"STET_FAULT": "decide:after-commit"})
    s.initialize()
    hid = propose(s, a)[0]
    answer = None
    try:
        answer = accept(s, [hid])
    except Exception:
        pass
    assert answer is None  # the fault point killed it after the commit
    s.kill()
    fill(small_fs)
    s = RawServer(ws)
    try:
        s.initialize()
        for method, params in (
            ("stet/listHunks", {}),
            ("workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": [hid]}]}),
        ):
            answer = s.request(method, params, timeout=30)
            assert "error" in answer and answer["error"]["code"] == -32005, answer
            assert "full" in answer["error"]["message"], answer
    finally:
        s.kill()
    (small_fs / "filler").unlink()
    s = RawServer(ws)
    try:
        s.initialize()
        assert {h["id"]: h["status"] for h in s.call("stet/listHunks", {})["hunks"]} == {hid: "applied"}
        assert a.read_text().count("NEW 1\n") == 1
    finally:
        s.kill()


def _doctor(ws) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    p = subprocess.run(
        [sys.executable, "-m", "stet", "doctor"], cwd=ws, capture_output=True, text=True, env=env, timeout=60
    )
    return p.returncode, p.stdout + p.stderr


def test_stet_doctor_explains_bad_stores(small_fs):
    """Each bad store gets an explanation from `stet doctor`, never a traceback."""
    ws = small_fs / "ws"
    ws.mkdir()
    write(ws / "a.py", A_TEXT)
    stet_dir = ws / ".stet"
    stet_dir.mkdir()
    # A damaged database, moved aside by a server start: doctor names the quarantine.
    (stet_dir / "stet.db").write_bytes(b"garbage" * 500)
    s = RawServer(ws)
    s.initialize()
    s.stop()
    code, out = _doctor(ws)
    assert "quarantine" in out and "Traceback" not in out, out
    # A newer Stet's schema: doctor says to upgrade, and leaves the file alone.
    (stet_dir / "stet.db").unlink()
    con = sqlite3.connect(stet_dir / "stet.db")
    con.execute("PRAGMA user_version=999")
    con.commit()
    con.close()
    before = (stet_dir / "stet.db").read_bytes()
    code, out = _doctor(ws)
    assert code != 0 and "newer" in out and "Upgrade" in out and "Traceback" not in out, out
    assert (stet_dir / "stet.db").read_bytes() == before
    # A read-only file system: doctor still reports, or says what is wrong, without a traceback.
    (stet_dir / "stet.db").unlink()
    s = RawServer(ws)
    s.initialize()
    s.stop()
    remount(small_fs, "ro")
    code, out = _doctor(ws)
    assert "Traceback" not in out and out.strip(), out
