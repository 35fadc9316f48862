"""Sizes are bounded per request, not per hunk.

The attacks, for real: one proposal of 500 one-line hunks carrying a 1 MB message (before the
fix: 502 MB stored, 500 MB per `stet/listHunks` and per `stet/hunksChanged`); a reject of every
hunk with 100 KB of feedback (50 MB stored); a proposal whose few small edits sit beside a
3 MB line, so that every hunk's context would carry it. The message is stored once, each
HunkState carries at most MESSAGE_INLINE characters of it (`messageTruncated`), the whole is
one `stet/proposal` away, and TooLarge covers everything a request makes Stet store.
Figures (before / after): `benchmarks/bench_amplification.py`, docs/RELIABILITY.md."""

from __future__ import annotations

import json
import os
import sqlite3

from stet.domain.model import MESSAGE_INLINE
from support.harness import rng, write
from support.rawlsp import RawServer

MB = 1_000_000


def store_bytes(db) -> int:
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(os.path.getsize(p) for p in (db, f"{db}-wal") if os.path.exists(p))


def test_a_huge_message_over_many_hunks_is_stored_and_sent_once(tmp_path):
    ws = tmp_path / "ws"
    f = write(ws / "a.txt", "".join(f"line {i}\n" for i in range(1002)))
    s = RawServer(ws)
    try:
        s.initialize()
        db = ws / ".stet" / "stet.db"
        empty = store_bytes(db)
        edits = [{"range": rng(2 * i, 0, 2 * i + 1, 0), "newText": f"NEW {i}\n"} for i in range(500)]
        message = "why " * (MB // 4)
        answer = s.call(
            "stet/propose", {"proposalId": "amp", "edit": {"changes": {f.as_uri(): edits}}, "message": message}
        )
        assert len(answer["hunks"]) == 500
        assert store_bytes(db) - empty < 3 * MB  # was 502 MB
        listed = s.call("stet/listHunks", {})["hunks"]
        assert len(json.dumps(listed)) < 5 * MB  # was 500 MB
        for h in listed:
            assert h["messageTruncated"] is True and len(h["message"]) == MESSAGE_INLINE
            assert message.startswith(h["message"][:-1])
        whole = s.call("stet/proposal", {"proposalId": "amp"})
        assert whole["message"] == message and len(whole["hunkIds"]) == 500
        # One reject re-sends the file's hunks, each with its inline message only.
        while not s.notes.empty():
            s.notes.get()
        s.call("workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": [listed[0]["id"]]}]})
        changed = s.wait_note("stet/hunksChanged")
        assert len(json.dumps(changed)) < 5 * MB  # was 500 MB, 17 s to arrive
        # 100 KB of feedback on 500 hunks would be 50 MB stored: refused whole, nothing changes.
        answer = s.request(
            "workspace/executeCommand",
            {"command": "stet.rejectAll", "arguments": [{"proposalId": "amp", "feedback": "f" * 100_000}]},
        )
        assert answer["error"]["code"] == -32004 and "store" in answer["error"]["message"], answer["error"]
        assert sum(h["status"] == "pending" for h in s.call("stet/listHunks", {})["hunks"]) == 499
        assert s.request("stet/proposal", {"proposalId": "nope"})["error"]["code"] == -32001
    finally:
        s.kill()
    s = RawServer(ws)  # after a restart, the same: the message is the proposal's
    try:
        s.initialize()
        listed = s.call("stet/listHunks", {})["hunks"]
        assert len(listed) == 500 and all(h["messageTruncated"] for h in listed)
    finally:
        s.kill()


def test_what_a_proposal_makes_stet_store_is_counted_not_only_its_new_text(tmp_path):
    ws = tmp_path / "ws"
    long_line = "x" * (3 * MB) + "\n"
    f = write(ws / "a.txt", "".join(f"line {i}\n{long_line}" for i in range(6)))
    s = RawServer(ws)
    try:
        s.initialize()
        # Six one-line edits (a few bytes of new text), each with the 3 MB line in its context.
        edits = [{"range": rng(2 * i, 0, 2 * i + 1, 0), "newText": f"NEW {i}\n"} for i in range(6)]
        answer = s.request("stet/propose", {"proposalId": "ctx", "edit": {"changes": {f.as_uri(): edits}}}, timeout=60)
        assert answer["error"]["code"] == -32004 and "store" in answer["error"]["message"], answer["error"]
        assert s.call("stet/listHunks", {})["hunks"] == []
        big = "m" * (11 * 1024 * 1024)  # the message alone over the limit
        answer = s.request(
            "stet/propose",
            {"proposalId": "msg", "edit": {"changes": {f.as_uri(): edits[:1]}}, "message": big},
            timeout=60,
        )
        assert answer["error"]["code"] == -32004, answer["error"]
    finally:
        s.kill()
