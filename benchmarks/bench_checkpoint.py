"""Benchmark 6: the anchor checkpoint trade-off: write volume against recovery time.

While a document is open, hunk positions move with every edit in memory; the server
writes them to the store only at checkpoints (on save, after an idle pause, at
shutdown) and recomputes them from content after a crash. This benchmark makes the
interval an explicit knob, through the trigger an editor really sends: a save (didSave)
every C edits.

Session: one open 20,000-line document with 1,000 pending hunks; 400 edits, each inserting
a line midway between two neighbouring hunks (so most hunks move, none is touched, no
hunk's nearest context changes); a save every C edits. Then the server is killed (SIGKILL) and started again; the editor re-opens its
buffer (didOpen with the unsaved text, right after `initialized`, as editors do).

Measured per interval C:
- write volume: bytes the server process wrote other than its protocol output
  (/proc/PID/io wchar minus the bytes the client read from its stdout): the database and
  its WAL, per 1,000 edits; and the number of checkpoints;
- time spent in checkpoints (didSave + a request round trip, median);
- recovery: from spawn to `stet/restored` with the buffer re-opened and re-checked (a
  request answered after the didOpen), and whether every hunk is found at its true line.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from common import STET, fresh_dir, remove, save_json, start_stet, summary
from lspclient import Server, rng
from workload import code_lines, file_uri, scatter_changes, write_file

LINES = 20_000
HUNKS = 1_000


async def session(root_base, base: list[str], new: list[str], interval: int | None, edits: int, seed: int) -> dict:
    root = fresh_dir("ckpt")
    try:
        path = root / "doc.py"
        write_file(path, "".join(base))
        uri = file_uri(path)
        server, _, _ = await start_stet(root, root / "server.log")
        edit = {"changes": {uri: [{"range": rng(0, 0, LINES, 0), "newText": "".join(new)}]}}
        res = await server.request("stet/propose", {"proposalId": "ck", "edit": edit})
        assert len(res["hunks"]) == HUNKS
        ids = [h["id"] for h in sorted(res["hunks"], key=lambda h: h["range"]["start"]["line"])]
        where = {h["id"]: h["range"]["start"]["line"] for h in res["hunks"]}
        server.open(uri, "".join(base))
        probe = {"uri": file_uri(root / "none.py")}
        await server.request("stet/listHunks", probe)
        io0, in0 = server.io(), server.bytes_in
        rnd = random.Random(seed)
        ckpt_times = []
        checkpoints = 0
        t_session = time.perf_counter()
        for k in range(edits):
            # Midway between two neighbouring hunks: far from both, so no hunk's text or
            # nearest context changes (see the notes on edits right next to a hunk).
            i = rnd.randrange(len(ids) - 1)
            at = (where[ids[i]] + where[ids[i + 1]]) // 2
            server.change(uri, [(rng(at, 0, at, 0), f"    typed_{k} = {k}\n")])
            for hid, ln in where.items():
                if ln >= at:
                    where[hid] = ln + 1
            if interval and (k + 1) % interval == 0:
                t0 = time.perf_counter()
                server.save(uri, str(path))
                await server.request("stet/listHunks", probe)
                ckpt_times.append(time.perf_counter() - t0)
                checkpoints += 1
        await server.request("stet/listHunks", probe)
        session_s = time.perf_counter() - t_session
        await asyncio.sleep(0.3)  # let the last checkpoint commit; the idle one comes after 2 s
        io1, in1 = server.io(), server.bytes_in
        written = (io1["wchar"] - io0["wchar"]) - (in1 - in0)
        buffer_text = server.docs[uri].text
        version = server.docs[uri].version
        await server.kill()
        # Restart: the editor re-opens its (unsaved) buffer right after `initialized`.
        again = Server(STET, str(root), stderr_path=str(root / "server.log"))
        await again.spawn()
        restored = again.wait_notification("stet/restored")
        await again.initialize(str(root))
        again.open(uri, buffer_text, version=version)
        params, t_restored = await restored
        await again.request("stet/listHunks", probe)
        t_ready = time.perf_counter()
        hunks = (await again.request("stet/listHunks", {"uri": uri}))["hunks"]
        right = sum(1 for h in hunks if h["status"] == "pending" and h["range"]["start"]["line"] == where[h["id"]])
        stale = sum(1 for h in hunks if h["status"] == "stale")
        misplaced = sum(1 for h in hunks if h["status"] == "pending" and h["range"]["start"]["line"] != where[h["id"]])
        await again.stop()
        return {
            "interval": interval,
            "checkpoints": checkpoints,
            "written_bytes": written,
            "written_per_1000_edits_kb": written / edits * 1000 / 1024,
            "checkpoint": summary(ckpt_times) if ckpt_times else None,
            "session_s": session_s,
            "recovery_s": t_ready - again.spawned_at,
            "restored_s": t_restored - again.spawned_at,
            "restored_reported_ms": params["durationMs"],
            "hunks_at_true_line": right,
            "hunks_stale": stale,
            "hunks_misplaced": misplaced,
            "hunks": len(hunks),
        }
    finally:
        remove(root)


async def main(intervals: list[int | None], edits: int, repeats: int) -> dict:
    rnd = random.Random(9)
    base = code_lines(LINES, rnd, tag="ck")
    new = scatter_changes(base, HUNKS, rnd)
    rows = []
    print(f"Checkpoint interval: {LINES} lines, {HUNKS} pending hunks, {edits} edits, crash, restart")
    for interval in intervals:
        runs = [await session(None, base, new, interval, edits, seed=100 + r) for r in range(repeats)]
        rec = sorted(r["recovery_s"] for r in runs)
        row = dict(runs[0])
        row["recovery_s"] = rec[len(rec) // 2]
        row["recovery_runs_s"] = rec
        rows.append(row)
        label = f"every {interval} edits" if interval else "never (crash before any save)"
        ck = row["checkpoint"]["median"] if row["checkpoint"] else float("nan")
        print(
            f"  {label:32} checkpoints {row['checkpoints']:4d}  written {row['written_per_1000_edits_kb']:9.1f} KiB/1000 edits"
            f"  checkpoint {ck:7.2f} ms  recovery {row['recovery_s'] * 1000:7.0f} ms"
            f"  hunks at true line {row['hunks_at_true_line']}/{row['hunks']}"
            f" (stale {row['hunks_stale']}, misplaced {row['hunks_misplaced']})"
        )
    return {"rows": rows, "lines": LINES, "hunks": HUNKS, "edits": edits}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", default="1,5,25,100,0", help="edits per save; 0 = never")
    ap.add_argument("--edits", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    intervals = [int(x) or None for x in args.intervals.split(",")]
    data = asyncio.run(main(intervals, args.edits, args.repeats))
    if args.save:
        save_json("checkpoint", data)
