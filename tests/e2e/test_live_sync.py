"""Live sync: two real servers on one workspace plus the CLI, sharing one store.

Each process must see the others' proposals and decisions (as `stet/hunksChanged`): within
one second on a quiet machine (the latencies are recorded in the run's figures; the tests wait
with generous deadlines, as a busy machine may take longer), and concurrent accepts of one hunk
must apply it exactly once.
"""

from __future__ import annotations

import asyncio
import json
import time

from support.clitools import stet, stet_json
from support.figures import FIGURES
from support.harness import Session, read

BASE = "".join(f"line {i}\n" for i in range(1, 11))
PATCH = "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-line 2\n+LINE TWO\n@@ -8 +8,2 @@\n-line 8\n+LINE EIGHT\n+line 8b\n"


async def seen(session: Session, check, since: int, timeout: float = 30.0) -> float:
    """Seconds until a hunksChanged notification after index `since` satisfies `check`."""
    t0 = time.monotonic()
    while True:
        if any(check(c) for c in session.changed[since:]):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"not seen within {timeout}s")
        await asyncio.sleep(0.005)


def status_of(hid: str, status: str):
    return lambda c: any(h["id"] == hid and h["status"] == status for h in c["hunks"])


async def cli(*args, ws, input=None, env=None):
    return await asyncio.to_thread(stet, *args, cwd=ws, input=input, env=env)


async def test_every_process_sees_the_others_within_a_second(ws, engine):
    """On each engine: SQLite's data_version, PostgreSQL's LISTEN/NOTIFY."""
    db = engine.db(ws)
    a, b = Session(ws, init_options={"db": db}), Session(ws, init_options={"db": db})
    env = {"STET_DB": db}
    await asyncio.gather(a.start(), b.start())
    latencies = {}
    try:
        # The CLI proposes: both windows show it.
        ia, ib = len(a.changed), len(b.changed)
        p = await cli("propose", "--patch", "-", "--id", "p1", "--json", ws=ws, input=PATCH, env=env)
        t_done = time.monotonic()
        h1, h2 = [h["id"] for h in json.loads(p.stdout)["hunks"]]
        la, lb = await asyncio.gather(seen(a, status_of(h1, "pending"), ia), seen(b, status_of(h1, "pending"), ib))
        latencies["cli->servers"] = time.monotonic() - t_done
        # Window A accepts: window B shows it applied.
        ib = len(b.changed)
        out = await a.command("stet.accept", {"hunkIds": [h1]})
        assert out["hunks"][0]["status"] == "applied"
        latencies["a->b"] = await seen(b, status_of(h1, "applied"), ib)
        # Window B rejects: window A shows it.
        ia = len(a.changed)
        await b.command("stet.reject", {"hunkIds": [h2], "feedback": "not now"})
        latencies["b->a"] = await seen(a, status_of(h2, "rejected"), ia)
        # The CLI undoes the rejection: both show it pending again; the CLI sees A's accept.
        ia, ib = len(a.changed), len(b.changed)
        await cli("undo", h2, ws=ws, env=env)
        await asyncio.gather(seen(a, status_of(h2, "pending"), ia), seen(b, status_of(h2, "pending"), ib))
        status = json.loads((await cli("status", "--all", "--json", ws=ws, env=env)).stdout)
        assert {h["id"]: h["status"] for h in status["hunks"]} == {h1: "applied", h2: "pending"}
        assert await a.hunks() == await b.hunks()
        FIGURES["live sync latencies"] = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in latencies.items())
    finally:
        await asyncio.gather(a.stop(), b.stop())


async def test_concurrent_accepts_apply_once(ws):
    a, b = Session(ws), Session(ws)
    await asyncio.gather(a.start(), b.start())
    try:
        for round_ in range(3):
            pid = f"c{round_}"
            line = 2 + 3 * round_
            at = read(ws / "a.py").splitlines().index(f"line {line}") + 1  # earlier rounds added lines
            patch = f"--- a/a.py\n+++ b/a.py\n@@ -{at} +{at},2 @@\n-line {line}\n+NEW {line}\n+added {line}\n"
            (h,) = stet_json("propose", "--patch", "-", "--id", pid, cwd=ws, input=patch)["hunks"]
            ia = len(a.changed)
            await seen(a, status_of(h["id"], "pending"), ia)
            results = await asyncio.gather(
                a.command("stet.accept", {"hunkIds": [h["id"]]}),
                b.command("stet.accept", {"hunkIds": [h["id"]]}),
                cli("accept", h["id"], "--json", ws=ws),
                cli("accept", h["id"], "--json", ws=ws),
                return_exceptions=True,
            )
            for r in results[:2]:
                assert not isinstance(r, Exception), r
                assert r["hunks"][0]["status"] in ("accepted", "applied")
            for r in results[2:]:
                assert r.returncode == 0, r.stderr
                assert "locked" not in r.stderr
            text = read(ws / "a.py")
            assert text.count(f"added {line}\n") == 1 and text.count(f"NEW {line}\n") == 1, text
            assert f"line {line}\n" not in text
        # Whichever process applied the last edit, every window learns it (live sync).
        final = await a.hunks_until(lambda hs: {h["status"] for h in hs} == {"applied"}, "every hunk applied")
        assert {h["status"] for h in final} == {"applied"}
        assert len(read(ws / "a.py").splitlines()) == 13
    finally:
        await asyncio.gather(a.stop(), b.stop())


async def test_many_writers_never_surface_a_locked_database(ws):
    """Several CLI processes deciding at once while two servers follow: no 'database is locked'."""
    a, b = Session(ws), Session(ws)
    await asyncio.gather(a.start(), b.start())
    try:
        patch = "".join(f"--- a/f{i}.txt\n+++ b/f{i}.txt\n@@ -1 +1 @@\n-x\n+X{i}\n" for i in range(8))
        for i in range(8):
            (ws / f"f{i}.txt").write_text("x\n")
        hunks = stet_json("propose", "--patch", "-", "--id", "many", cwd=ws, input=patch)["hunks"]
        procs = await asyncio.gather(
            *(cli("accept", h["id"], ws=ws) for h in hunks), cli("status", ws=ws), cli("log", ws=ws)
        )
        for p in procs:
            assert p.returncode == 0 and "locked" not in p.stderr.lower(), p.stderr
        assert all((ws / f"f{i}.txt").read_text() == f"X{i}\n" for i in range(8))
        last = hunks[-1]["id"]
        await seen(b, status_of(last, "applied"), 0)
    finally:
        await asyncio.gather(a.stop(), b.stop())


async def test_concurrent_accepts_of_different_hunks_in_one_file_lose_nothing(ws):
    """Each process reads, checks and rewrites the file: without a shared lock edits were lost.

    A pause between reading and writing (a fault point) makes the race certain, not lucky.
    """
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    patch = "--- a/big.txt\n+++ b/big.txt\n" + "".join(
        f"@@ -{n} +{n} @@\n-line {n}\n+LINE {n}\n" for n in range(2, 40, 5)
    )
    hunks = stet_json("propose", "--patch", "-", cwd=ws, input=patch)["hunks"]
    a = Session(ws)
    await a.start()
    try:
        outcomes = await asyncio.gather(
            *(cli("accept", h["id"], ws=ws, env={"STET_FAULT": "effect:before-write~0.2"}) for h in hunks[2:]),
            a.command("stet.accept", {"hunkIds": [hunks[0]["id"], hunks[1]["id"]]}),
        )
        assert all(p.returncode == 0 for p in outcomes[:-1]), [p.stderr for p in outcomes[:-1]]
        text = read(ws / "big.txt")
        assert [n for n in range(2, 40, 5) if f"LINE {n}\n" in text] == list(range(2, 40, 5)), text
        assert text.count("LINE") == len(hunks) == 8
    finally:
        await a.stop()


async def test_a_busy_store_is_waited_for_not_reported(ws):
    """Another process holds the write lock longer than SQLite's busy timeout: the CLI waits it out."""
    import sqlite3

    patch = "--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-line 3\n+LINE 3\n"
    (h,) = stet_json("propose", "--patch", "-", cwd=ws, input=patch)["hunks"]
    holder = sqlite3.connect(ws / ".stet" / "stet.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        pending = asyncio.ensure_future(
            asyncio.to_thread(stet, "accept", h["id"], cwd=ws, env={"STET_BUSY_TIMEOUT_MS": "100"})
        )
        await asyncio.sleep(1.0)
        assert not pending.done(), "the accept went through while another process held the lock"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    p = await pending
    assert p.returncode == 0 and "locked" not in p.stderr, p.stderr
    assert time.monotonic() - started >= 1.0
    assert "LINE 3\n" in read(ws / "a.py")
