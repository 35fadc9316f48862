"""Benchmarks 1, 2, 5 and 7: accept round trip, restart to `stet/restored`, resident memory,
and how each grows with the number of pending hunks in the store (10^2 .. 10^5).

For each size N, a workspace of N/10 files (120 lines each, 10 scattered agent changes per
file) is proposed to a real `stet serve` process over stdio, then:

- restart: the server is started again and timed from spawn to `stet/restored`; its floor,
  measured in the same run, is a fresh interpreter importing `stet.lsp.server` (what `stet
  serve` imports) + a raw stdlib-sqlite3 SELECT of every hunk row + reading every file that
  has hunks. Resident memory (VmRSS) is read when `stet/restored` arrives.
- accept: one file is open in the editor; each round accepts one of its hunks (answered
  once the decision is committed and the edit is confirmed: the server sends
  workspace/applyEdit, the client applies it, sends didChange, answers) and then undoes it
  (not timed) so the next round has a pending hunk again. The floor, interleaved round by
  round: a no-op executeCommand + an executeCommand that does one applyEdit round trip on
  a pygls server with no logic (floor_server.py), and one raw stdlib-sqlite3 durable commit.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sqlite3
import subprocess
import time
from pathlib import Path

from common import (
    FLOOR,
    PY,
    REPO,
    RawCommit,
    fresh_dir,
    line,
    make_files,
    propose_files,
    remove,
    save_json,
    start_stet,
    summary,
)
from lspclient import Server
from workload import file_uri


def import_floor() -> float:
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", "import stet.lsp.serve"], check=True, cwd=str(REPO))  # what `stet serve` imports
    return time.perf_counter() - t0


async def empty_store_rss(samples: int = 3) -> float:
    """Resident memory (MB) of a server restored from an empty store: the base the per-hunk
    memory is measured over."""
    root = fresh_dir("empty")
    try:
        (root / "a.py").write_text("x = 1\n")
        out = []
        for _ in range(samples):
            server, _, _ = await start_stet(root)
            out.append(server.rss_kb() / 1024)
            await server.stop()
        return sorted(out)[len(out) // 2]
    finally:
        remove(root)


def select_and_read(db: Path, paths: list[Path]) -> tuple[float, float]:
    t0 = time.perf_counter()
    conn = sqlite3.connect(str(db))
    rows = conn.execute("SELECT * FROM hunks").fetchall()
    conn.close()
    t1 = time.perf_counter()
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            total += len(f.read())
    t2 = time.perf_counter()
    assert rows and total
    return t1 - t0, t2 - t1


async def measure_restart(root: Path, paths: list[Path], samples: int) -> dict:
    db = root / ".stet" / "stet.db"
    restart, floor, imp, sel, rd, rss, hwm, reported, cpu = [], [], [], [], [], [], [], [], []
    counts = None
    for _ in range(samples):
        gc.collect()
        server, restored, took = await start_stet(root, root / "server.log")
        rss.append(server.rss_kb() / 1024)
        cpu.append(server.cpu_s())
        hwm.append(server.hwm_kb() / 1024)
        reported.append(restored["durationMs"] / 1000)
        counts = restored["counts"]
        await server.stop()
        restart.append(took)
        t_imp = import_floor()
        t_sel, t_read = select_and_read(db, paths)
        imp.append(t_imp)
        sel.append(t_sel)
        rd.append(t_read)
        floor.append(t_imp + t_sel + t_read)
    return {
        "restart": summary(restart),
        "floor": summary(floor),
        "floor_import": summary(imp),
        "floor_select": summary(sel),
        "floor_read": summary(rd),
        "recovery_reported": summary(reported),
        "server_cpu": summary(cpu),
        "rss_mb": max(rss),
        "hwm_mb": max(hwm),
        "counts": counts,
    }


async def measure_accept(root: Path, hot_path: Path, rounds: int) -> dict:
    server, _, _ = await start_stet(root, root / "server.log")
    floor = Server(FLOOR, str(root))
    await floor.spawn()
    await floor.initialize(str(root))
    raw = RawCommit(root / "raw-commit.db")
    try:
        hot = file_uri(hot_path)
        text = hot_path.read_text()
        server.open(hot, text)
        floor_uri = file_uri(root / "floor-doc.py")
        floor.open(floor_uri, text)
        hunks = (await server.request("stet/listHunks", {"uri": hot, "status": ["pending"]}))["hunks"]
        assert hunks, "the hot file has no pending hunk"
        ids = [h["id"] for h in hunks]
        accept, undo, noop, apply_rt, commit, floor_total, stet_noop = [], [], [], [], [], [], []
        client_apply, strict_floor = [], []
        before_edit, after_edit = [], []  # accept sent -> applyEdit read; applyEdit read -> answer read
        cpu0 = None
        for r in range(rounds + 10):
            if r == 10:
                cpu0 = server.cpu_s()
            warm = r < 10
            _, t_noop = await floor.timed_request(
                "workspace/executeCommand", {"command": "floor.noop", "arguments": []}
            )
            res, t_apply = await floor.timed_request(
                "workspace/executeCommand",
                {"command": "floor.apply", "arguments": [{"uri": floor_uri, "line": 5, "text": f"    x = {r}\n"}]},
            )
            assert res["applied"]
            t_commit = raw.once()
            # Stet's own cheapest request: an unknown command, answered with an error.
            t0 = time.perf_counter()
            try:
                await server.request("workspace/executeCommand", {"command": "stet.benchNoop", "arguments": []})
            except Exception:
                pass
            t_stet_noop = time.perf_counter() - t0
            hid = ids[r % len(ids)]
            t0 = time.perf_counter()
            res, t_accept = await server.timed_request(
                "workspace/executeCommand", {"command": "stet.accept", "arguments": [{"hunkIds": [hid]}]}
            )
            t_edit = server.request_seen.get("workspace/applyEdit", 0.0) - t0
            t_client = server.apply_handling_s
            assert res["hunks"][0]["status"] == "applied", res
            res, t_undo = await server.timed_request(
                "workspace/executeCommand", {"command": "stet.undo", "arguments": [{"hunkIds": [hid]}]}
            )
            assert res["hunks"][0]["status"] == "pending", res
            if warm:
                continue
            accept.append(t_accept)
            before_edit.append(t_edit)
            after_edit.append(t_accept - t_edit)
            undo.append(t_undo)
            noop.append(t_noop)
            apply_rt.append(t_apply)
            commit.append(t_commit)
            stet_noop.append(t_stet_noop)
            # The floor: a no-op command round trip + an applyEdit round trip + one
            # durable commit. floor.apply is one command round trip carrying one applyEdit
            # round trip, so it already holds the first two.
            floor_total.append(t_apply + t_commit)
            # The strict floor: Stet's own cheapest request round trip, the client's handling of
            # the applyEdit (apply, didChange, answer), one raw durable commit.
            client_apply.append(t_client)
            strict_floor.append(t_stet_noop + t_client + t_commit)
        cpu_per_round = (server.cpu_s() - cpu0) / rounds
        return {
            "server_cpu_per_accept_and_undo_ms": cpu_per_round * 1000,
            "accept": summary(accept),
            "accept_until_applyedit": summary(before_edit),
            "accept_after_applyedit": summary(after_edit),
            "undo": summary(undo),
            "floor": summary(floor_total),
            "strict_floor": summary(strict_floor),
            "client_applyedit_handling": summary(client_apply),
            "floor_noop_command": summary(noop),
            "floor_command_with_applyedit": summary(apply_rt),
            "floor_applyedit_only": summary([a - n for a, n in zip(apply_rt, noop)]),
            "floor_commit": summary(commit),
            "stet_noop_command": summary(stet_noop),
            "rounds": rounds,
        }
    finally:
        raw.close()
        await floor.stop()
        await server.stop()


async def run_size(n: int, restarts: int, rounds: int, keep: bool = False) -> dict:
    files_count = max(1, n // 10)
    root = fresh_dir(f"scale{n}")
    try:
        t0 = time.perf_counter()
        files = make_files(root, files_count)
        gen = time.perf_counter() - t0
        server, _, _ = await start_stet(root, root / "server.log")
        took = await propose_files(server, files)
        rss_after_ingest = server.rss_kb() / 1024
        await server.stop()
        paths = [p for p, _, _ in files]
        out = {
            "hunks": n,
            "files": files_count,
            "generate_s": gen,
            "ingest_s": took,
            "rss_after_ingest_mb": rss_after_ingest,
        }
        out.update(await measure_restart(root, paths, restarts))
        assert out["counts"]["pending"] == n, out["counts"]
        if rounds:
            out["accept"] = await measure_accept(root, paths[0], rounds)
        return out
    finally:
        if not keep:
            remove(root)


def report(res: dict) -> None:
    print(f"N = {res['hunks']} pending hunks over {res['files']} files (ingest {res['ingest_s']:.1f} s)")
    print(line("restart to stet/restored", res["restart"], res["floor"]))
    print(line("  floor: import + SELECT + read files", res["floor"]))
    print(f"  server CPU to restored: median {res['server_cpu']['median']:.0f} ms")
    print(f"  resident memory at restored: {res['rss_mb']:.1f} MB (peak {res['hwm_mb']:.1f} MB)")
    if "rss_per_hunk_kb" in res:
        print(f"  resident memory per hunk over the empty store: {res['rss_per_hunk_kb']:.2f} KB")
    if "accept" in res:
        a = res["accept"]
        print(line("accept round trip (durable + confirmed)", a["accept"], a["floor"]))
        print(line("  stet: accept sent -> applyEdit received", a["accept_until_applyedit"]))
        print(line("  stet: applyEdit received -> answer", a["accept_after_applyedit"]))
        print(line("  floor: command+applyEdit RT + commit", a["floor"]))
        if "strict_floor" in a:
            print(line("  vs strict floor: stet no-op + client + commit", a["accept"], a["strict_floor"]))
            print(line("  strict floor part: client applyEdit handling", a["client_applyedit_handling"]))
        print(line("  floor part: no-op command RT", a["floor_noop_command"]))
        print(line("  floor part: raw durable commit", a["floor_commit"]))
        print(line("  stet no-op command RT (unknown cmd)", a["stet_noop_command"]))
        print(f"  server CPU per accept + undo: {a['server_cpu_per_accept_and_undo_ms']:.2f} ms")


async def main(sizes: list[int], restarts: list[int], rounds: list[int]) -> dict:
    results = []
    empty = await empty_store_rss()
    print(f"resident memory, empty store: {empty:.1f} MB")
    for n, k, r in zip(sizes, restarts, rounds):
        res = await run_size(n, k, r)
        res["rss_per_hunk_kb"] = (res["rss_mb"] - empty) * 1024 / n
        report(res)
        results.append(res)
    return {"sizes": results, "empty_rss_mb": empty}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,1000,10000,100000")
    ap.add_argument("--restarts", default="10,10,10,3")
    ap.add_argument("--rounds", default="300,300,300,100")
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    data = asyncio.run(
        main(sizes, [int(x) for x in args.restarts.split(",")], [int(x) for x in args.rounds.split(",")])
    )
    if args.save:
        save_json("scale", data)
