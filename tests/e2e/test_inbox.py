"""The inbox of a real server: files dropped by agents are proposed exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from support.clitools import db_summary, stet
from support.harness import Session, read, uri

PATCH = "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-line 2\n+LINE TWO\n"
FAST = {"STET_INBOX_RETRY": "0.4"}


def inbox(ws: Path) -> Path:
    return ws / ".stet" / "inbox"


def drop(ws: Path, name: str, text: str, atomic: bool = True) -> Path:
    """Write a proposal file as an agent should: a temp name, then a rename."""
    folder = inbox(ws)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    if atomic:
        tmp = folder / f".{name}.tmp"
        tmp.write_text(text)
        os.replace(tmp, target)
    else:
        target.write_text(text)
    return target


async def until(check, timeout: float = 30.0, step: float = 0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s: {check}")
        await asyncio.sleep(step)


def ops(ws: Path, kind: str) -> int:
    import sqlite3

    conn = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        return conn.execute("SELECT COUNT(*) FROM oplog WHERE kind = ?", (kind,)).fetchone()[0]
    finally:
        conn.close()


async def test_dropped_files_are_proposed_and_moved_to_done(ws, session):
    a = uri(ws / "a.py")
    drop(ws, "p1.patch", PATCH)
    params = {
        "edit": {
            "changes": {
                uri(ws / "b.txt"): [
                    {
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                        "newText": "ALPHA\n",
                    }
                ]
            }
        },
        "message": "from json",
    }
    drop(ws, "p2.json", json.dumps(params), atomic=False)
    # Temp and hidden names are not proposals.
    for name in ("p3.patch.tmp", ".p3.patch", "p3.patch~", "#p3.patch#", "notes.txt"):
        (inbox(ws) / name).write_text(PATCH)
    await until(lambda: (inbox(ws) / "done" / "p1.patch").exists() and (inbox(ws) / "done" / "p2.json").exists())
    assert [h["newText"] for h in await session.hunks(proposalId="p1")] == ["LINE TWO\n"]
    assert [h["message"] for h in await session.hunks(proposalId="p2")] == ["from json"]
    await until(lambda: any(c["uri"] == a and c["hunks"] for c in session.changed))
    left = sorted(p.name for p in inbox(ws).iterdir() if p.is_file())
    assert left == sorted(["p3.patch.tmp", ".p3.patch", "p3.patch~", "#p3.patch#", "notes.txt"])
    assert read(ws / "a.py") == "".join(f"line {i}\n" for i in range(1, 11)), "a proposal writes nothing"
    # The same file dropped again adds nothing (same id, same content).
    drop(ws, "p1.patch", PATCH)
    await until(lambda: not (inbox(ws) / "p1.patch").exists())
    assert ops(ws, "propose") == 2


async def test_files_present_at_start_are_ingested(ws):
    drop(ws, "early.patch", PATCH)
    s = Session(ws)
    await s.start()
    try:
        await until(lambda: (inbox(ws) / "done" / "early.patch").exists())
        assert len(await s.hunks(proposalId="early")) == 1
    finally:
        await s.stop()


async def test_unparsable_file_is_retried_once_then_failed(ws):
    # A retry delay that a busy machine's scheduling cannot eat: the second write below must
    # come within it.
    s = Session(ws, env={"STET_INBOX_RETRY": "2.0"})
    await s.start()
    try:
        # Written in two steps, the second within the retry delay: it is ingested.
        (inbox(ws)).mkdir(parents=True, exist_ok=True)
        slow = inbox(ws) / "slow.patch"
        slow.write_text(PATCH[:25])
        await asyncio.sleep(0.25)
        slow.write_text(PATCH)
        # Never valid: failed after one retry, with the reason beside it.
        bad = drop(ws, "bad.json", '{"edit": ')
        t0 = time.monotonic()
        await until(lambda: (inbox(ws) / "failed" / "bad.json").exists())
        assert time.monotonic() - t0 >= 1.9, "failed only after a retry"
        assert "not JSON" in (inbox(ws) / "failed" / "bad.error").read_text()
        assert not bad.exists()
        await until(lambda: (inbox(ws) / "done" / "slow.patch").exists())
        assert len(await s.hunks(proposalId="slow")) == 1
    finally:
        await s.stop()


async def test_refused_proposals_fail_at_once_saying_why(ws, session):
    drop(ws, "nomatch.patch", "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-line two\n+LINE TWO\n")
    drop(ws, "outside.patch", "--- a/../x.py\n+++ b/../x.py\n@@ -1 +1 @@\n-x\n+y\n")
    drop(ws, "other.json", json.dumps({"proposalId": "not-other", "edit": {"changes": {}}}))
    failed = inbox(ws) / "failed"
    await until(lambda: all((failed / f"{n}.error").exists() for n in ("nomatch", "outside", "other")))
    assert "a.py: line 2 does not match" in (failed / "nomatch.error").read_text()
    assert "climbs out" in (failed / "outside.error").read_text()
    assert "differs from the file's name" in (failed / "other.error").read_text()
    assert await session.hunks() == []
    doctor = await asyncio.to_thread(stet, "doctor", cwd=ws)
    assert doctor.returncode == 1 and "3 inbox file(s) failed" in doctor.stdout, doctor.stdout


async def test_killed_while_ingesting_then_ingested_exactly_once(ws):
    s = Session(ws, env={"STET_FAULT": "inbox:after-propose"})
    await s.start()
    drop(ws, "k1.patch", PATCH)
    assert await s.died() != 0
    # The proposal committed, the file did not move: the next start finishes the job.
    assert (inbox(ws) / "k1.patch").exists()
    before = db_summary(ws / ".stet" / "stet.db")
    assert before[2] == 1
    s2 = Session(ws)
    await s2.start()
    try:
        await until(lambda: (inbox(ws) / "done" / "k1.patch").exists())
        assert db_summary(ws / ".stet" / "stet.db") == before, "ingesting again added nothing"
        assert ops(ws, "propose") == 1
        assert len(await s2.hunks(proposalId="k1")) == 1
    finally:
        await s2.stop()


async def test_two_servers_share_one_inbox(ws):
    a, b = Session(ws), Session(ws)
    await asyncio.gather(a.start(), b.start())
    try:
        for n in range(5):
            drop(ws, f"m{n}.patch", f"--- a/a.py\n+++ b/a.py\n@@ -{n + 1} +{n + 1} @@\n-line {n + 1}\n+LINE {n + 1}\n")
        await until(lambda: len(list((inbox(ws) / "done").iterdir())) == 5)
        assert ops(ws, "propose") == 5
        assert not list((inbox(ws) / "failed").iterdir())
    finally:
        await asyncio.gather(a.stop(), b.stop())


async def test_inbox_works_with_the_polling_watcher(ws):
    s = Session(ws, env={"STET_WATCH": "poll"})
    await s.start()
    try:
        drop(ws, "polled.patch", PATCH)
        await until(lambda: (inbox(ws) / "done" / "polled.patch").exists())
        assert len(await s.hunks(proposalId="polled")) == 1
    finally:
        await s.stop()
