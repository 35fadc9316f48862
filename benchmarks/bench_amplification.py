"""Amplification: how much a small request makes Stet store and send.

One proposal of N tiny hunks (one line each) carrying a message of M bytes: what it costs in
the store (the database and its WAL on disk, after a checkpoint), what `stet/listHunks`
answers, and what rejecting one hunk costs (the answer's latency and the bytes of the
`stet/hunksChanged` it triggers). Also: a reject of every hunk with F bytes of feedback.

    python benchmarks/bench_amplification.py                 # 500 hunks, a 1 MB message
    python benchmarks/bench_amplification.py --hunks 200 --message 100000
    PYTHONPATH=/path/to/old/server python benchmarks/bench_amplification.py   # another Stet

Prints one line per figure; compare runs on the same machine (2 cores shared here).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from common import STET
from lspclient import LspError, Server, rng


def store_bytes(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if p.exists())


async def quiet(s: Server, still: float = 3.0) -> float:
    """Wait until the server has sent nothing for `still` seconds; returns when it last sent."""
    last_bytes, last_change = s.bytes_in, time.perf_counter()
    while time.perf_counter() - last_change < still:
        await asyncio.sleep(0.05)
        if s.bytes_in != last_bytes:
            last_bytes, last_change = s.bytes_in, time.perf_counter()
    return last_change


async def run(hunks: int, message_bytes: int, feedback_bytes: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="stet-amp-")).resolve()
    f = root / "a.txt"
    f.write_text("".join(f"line {i}\n" for i in range(2 * hunks + 2)))
    db = root / ".stet" / "stet.db"
    s = Server(STET, str(root))
    await s.spawn()
    out: dict = {"hunks": hunks, "message": message_bytes}
    try:
        restored = s.wait_notification("stet/restored")
        await s.initialize(str(root))
        await asyncio.wait_for(restored, 60)
        empty = store_bytes(db)
        edits = [{"range": rng(2 * i, 0, 2 * i + 1, 0), "newText": f"NEW {i}\n"} for i in range(hunks)]
        params = {"proposalId": "amp", "edit": {"changes": {f.as_uri(): edits}}, "message": "m" * message_bytes}
        out["request bytes"] = len(json.dumps(params))
        t0 = time.perf_counter()
        try:
            answer = await s.request("stet/propose", params)
        except LspError as exc:
            out["propose"] = f"refused {exc.code}"
            return out
        out["propose s"] = round(time.perf_counter() - t0, 3)
        ids = [h["id"] for h in answer["hunks"]]
        out["propose answer bytes"] = len(json.dumps(answer))
        before = s.bytes_in
        await quiet(s)  # the proposal's own notifications (hunksChanged, diagnostics)
        out["propose notifications bytes"] = s.bytes_in - before
        out["stored bytes"] = store_bytes(db) - empty
        before = s.bytes_in
        listed = await s.request("stet/listHunks", {})
        out["listHunks bytes"] = s.bytes_in - before
        assert len(listed["hunks"]) == hunks
        await quiet(s)
        before = s.bytes_in
        changed = s.wait_notification("stet/hunksChanged")
        t0 = time.perf_counter()
        await s.request("workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": ids[:1]}]})
        out["reject one: answer s"] = round(time.perf_counter() - t0, 3)
        await asyncio.wait_for(changed, 120)
        out["reject one: until its hunksChanged is read s"] = round(time.perf_counter() - t0, 3)
        await quiet(s)
        out["reject one: bytes sent (answer + hunksChanged + diagnostics)"] = s.bytes_in - before
        if feedback_bytes:
            grown = store_bytes(db)
            try:
                await s.request(
                    "workspace/executeCommand",
                    {
                        "command": "stet.rejectAll",
                        "arguments": [{"proposalId": "amp", "feedback": "f" * feedback_bytes}],
                    },
                )
                out[f"reject all with {feedback_bytes} B feedback: stored bytes"] = store_bytes(db) - grown
            except LspError as exc:
                out[f"reject all with {feedback_bytes} B feedback"] = f"refused {exc.code}"
    finally:
        await s.kill()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hunks", type=int, default=500)
    ap.add_argument("--message", type=int, default=1_000_000, help="bytes of the proposal's message")
    ap.add_argument("--feedback", type=int, default=100_000, help="bytes of feedback on a reject of every hunk")
    args = ap.parse_args()
    for name, value in asyncio.run(run(args.hunks, args.message, args.feedback)).items():
        print(f"{name}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
