"""Load: several server processes and CLI writers on one store, and a large review.

- Two real servers (two editor windows) and two CLI writer processes decide over one store at
  once, in bounded loops: each hunk decided by one of them, some hunks contested by two, some
  requests replayed from another process. Afterwards every acknowledged decision is there,
  none twice, contested hunks end in one consistent state, each applied hunk is in the file
  exactly once, no "database is locked" reaches anyone, and the store checks ok.
- A proposal of 10,000 hunks, accepted all at once, and a store of 100,000 hunks restarted:
  the figures are measured and reported (tests/support/figures.py); the bounds asserted are generous
  (10x the benchmarks' targets would still pass) so that a slow CI machine never flakes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time

import pytest

from support.figures import FIGURES
from support.harness import rng, write
from support.rawlsp import RawServer

STET = [sys.executable, "-m", "stet"]


async def cli(cwd, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    proc = await asyncio.create_subprocess_exec(
        *STET, *args, cwd=str(cwd), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, out.decode(), err.decode()


def followed(ws, *servers: RawServer, timeout: float = 60) -> list[dict]:
    """Once every server shows what the store holds (each follows the others' writes: within
    a second on a quiet machine), the first one's hunks."""
    deadline = time.monotonic() + timeout
    while True:
        con = sqlite3.connect(ws / ".stet" / "stet.db")
        try:
            stored = dict(con.execute("SELECT id, status || ' ' || version FROM hunks").fetchall())
        finally:
            con.close()
        views = [s.call("stet/listHunks", {})["hunks"] for s in servers]
        if all({h["id"]: f"{h['status']} {h['version']}" for h in v} == stored for v in views):
            return views[0]
        assert time.monotonic() < deadline, "the servers never showed what the store holds"
        time.sleep(0.1)


def run_in_thread(fn, *args):
    return asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def test_two_servers_and_two_cli_writers_on_one_store(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    n_files, per_file = 4, 12
    files = [
        write(ws / f"f{i}.py", "".join(f"f{i} line {k}\n" for k in range(3 * per_file + 2))) for i in range(n_files)
    ]
    a, b = RawServer(ws), RawServer(ws)
    a.initialize()
    b.initialize()
    try:
        edit = {
            "changes": {
                p.resolve().as_uri(): [
                    {"range": rng(3 * k + 1, 0, 3 * k + 2, 0), "newText": f"NEW {p.stem} {k}\n"}
                    for k in range(per_file)
                ]
                for p in files
            }
        }
        hunks = a.call("stet/propose", {"proposalId": "load", "edit": edit})["hunks"]
        ids = [h["id"] for h in hunks]
        assert len(ids) == n_files * per_file
        # Who decides what: four deciders, a quarter of the hunks each; every fifth hunk is also
        # contested by the next decider with the opposite decision.
        deciders = ["A", "B", "C1", "C2"]
        plan: dict[str, list[tuple[str, str, str]]] = {d: [] for d in deciders}
        for i, hid in enumerate(ids):
            who = deciders[i % 4]
            action = "accept" if i % 3 else "reject"
            plan[who].append((hid, action, f"rq-{i}"))
            if i % 5 == 0:
                other = deciders[(i + 1) % 4]
                plan[other].append((hid, "reject" if action == "accept" else "accept", f"rq-{i}-contest"))
        outcomes: dict[str, list] = {d: [] for d in deciders}

        async def server_loop(name, server):
            for hid, action, rid in plan[name]:
                answer = await run_in_thread(
                    lambda: server.request(
                        "workspace/executeCommand",
                        {"command": f"stet.{action}", "arguments": [{"hunkIds": [hid], "requestId": rid}]},
                        timeout=60,
                    )
                )
                outcomes[name].append((hid, action, rid, answer.get("result"), answer.get("error")))

        async def cli_loop(name):
            for hid, action, rid in plan[name]:
                code, out, err = await cli(ws, action, hid, "--request-id", rid, "--json")
                result = json.loads(out) if out.strip() else None
                outcomes[name].append(
                    (hid, action, rid, result if code == 0 else None, None if code == 0 else (code, out, err))
                )

        started = time.monotonic()
        await asyncio.gather(server_loop("A", a), server_loop("B", b), cli_loop("C1"), cli_loop("C2"))
        elapsed = time.monotonic() - started
        # Replays from another process: same requestId, nothing changes. First each server
        # follows the others' writes (live sync).
        before = followed(ws, a, b)
        for name in deciders:
            for hid, action, rid, result, error in outcomes[name][:3]:
                if result is not None:
                    again = b.request(
                        "workspace/executeCommand",
                        {"command": f"stet.{action}", "arguments": [{"hunkIds": [hid], "requestId": rid}]},
                    )
                    assert "result" in again, again
        followed(ws, a, b)
        after_a = {h["id"]: h for h in a.call("stet/listHunks", {})["hunks"]}
        after_b = {h["id"]: h for h in b.call("stet/listHunks", {})["hunks"]}
        assert {k: v["status"] for k, v in after_a.items()} == {h["id"]: h["status"] for h in before}
        assert {k: (v["status"], v["version"]) for k, v in after_a.items()} == {
            k: (v["status"], v["version"]) for k, v in after_b.items()
        }
    finally:
        a.kill()
        b.kill()
    errors = [(n, o) for n in deciders for o in outcomes[n] if o[4] is not None]
    for name, (hid, action, rid, _, error) in errors:  # only refusals: never a lock or an internal error
        text = json.dumps(error)
        assert "locked" not in text.lower() and "-32603" not in text and "-32005" not in text, (name, error)
        assert "-32002" in text or "Conflict" in text or (isinstance(error, tuple) and error[0] == 1), (name, error)
    # Every hunk ends as one of its deciders made it, and the files agree.
    won = {}
    for name in deciders:
        for hid, action, rid, result, error in outcomes[name]:
            if result is not None:
                won.setdefault(hid, set()).add(action)
    for hid, h in after_a.items():
        assert hid in won, f"{hid}: no decision acknowledged"
        expected = {"accept": {"applied"}, "reject": {"rejected"}}
        assert any(h["status"] in expected[a_] for a_ in won[hid]), (hid, h["status"], won[hid])
    for p in files:
        text = p.read_text()
        for h in after_a.values():
            if h["uri"] == p.resolve().as_uri():
                assert text.count(h["newText"]) == (1 if h["status"] == "applied" else 0), (h["id"], h["status"])
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        decided = con.execute("SELECT COUNT(*) FROM oplog WHERE kind IN ('accept', 'reject')").fetchone()[0]
    finally:
        con.close()
    acknowledged = sum(1 for n in deciders for o in outcomes[n] if o[3] is not None)
    assert decided <= acknowledged  # no decision stored twice (no-op repeats log nothing or once)
    FIGURES["load, 2 servers + 2 CLI writers"] = (
        f"{sum(len(p) for p in plan.values())} decisions on {len(ids)} hunks "
        f"({sum(1 for i in range(len(ids)) if i % 5 == 0)} contested) in {elapsed:.1f} s, "
        f"{len(errors)} refused as Conflict, 0 lock errors, 0 lost, 0 doubled"
    )


@pytest.mark.skipif(os.environ.get("STET_LOAD_SCALE", "1") == "0", reason="STET_LOAD_SCALE=0")
def test_a_proposal_of_10000_hunks_and_a_store_of_100000(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    n_files, per_file = 10, 10_000
    paths = [write(ws / f"big{i}.txt", "".join(f"{i}:{k}\n" for k in range(2 * per_file))) for i in range(n_files)]
    s = RawServer(ws)
    figures = {}
    try:
        s.initialize()
        for i, p in enumerate(paths):
            edit = {
                "changes": {
                    p.resolve().as_uri(): [
                        {"range": rng(2 * k, 0, 2 * k + 1, 0), "newText": f"{i}:{k} new\n"} for k in range(per_file)
                    ]
                }
            }
            t = time.monotonic()
            hunks = s.call("stet/propose", {"proposalId": f"big{i}", "edit": edit}, timeout=600)["hunks"]
            if i == 0:
                figures["propose 10,000 hunks"] = time.monotonic() - t
                assert len(hunks) == per_file
        t = time.monotonic()
        listed = s.call("stet/listHunks", {}, timeout=600)["hunks"]
        figures["list 100,000 hunks"] = time.monotonic() - t
        assert len(listed) == n_files * per_file
        t = time.monotonic()
        res = s.call(
            "workspace/executeCommand",
            {"command": "stet.acceptAll", "arguments": [{"proposalId": "big0"}]},
            timeout=600,
        )
        figures["accept 10,000 hunks in one call"] = time.monotonic() - t
        assert {h["status"] for h in res["hunks"]} == {"applied"}
    finally:
        s.kill()
    text = paths[0].read_text()
    assert text.count(" new\n") == per_file
    t = time.monotonic()
    s = RawServer(ws)
    try:
        s.initialize()
        figures["restart with 100,000 hunks (to stet/restored)"] = time.monotonic() - t
        t = time.monotonic()
        one = s.call(
            "workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": [listed[-1]["id"]]}]}
        )
        figures["first decision after that restart"] = time.monotonic() - t
        assert one["hunks"][0]["status"] == "rejected"
        times = []
        for h in listed[-6:-1]:
            t = time.monotonic()
            one = s.call("workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": [h["id"]]}]})
            times.append(time.monotonic() - t)
            assert one["hunks"][0]["status"] == "rejected"
        figures["a decision in a store of 100,000 (median of 5)"] = sorted(times)[2]
    finally:
        s.kill()
    FIGURES["scale"] = ", ".join(f"{k}: {v * 1000:.0f} ms" if v < 1 else f"{k}: {v:.2f} s" for k, v in figures.items())
    # Generous bounds: report the figures, fail only on something pathological.
    assert figures["a decision in a store of 100,000 (median of 5)"] < 5
    assert figures["restart with 100,000 hunks (to stet/restored)"] < 180
