"""Benchmark 4: typing in a document with 2,000 pending hunks, against one with none.

Two open documents with the same 20,000 lines: `busy.py` carries 2,000 pending hunks
(proposed by an agent), `quiet.py` none. The editor types into each alternately, at the
same place (a line in the middle, between hunks): characters, and an Enter every 20
keystrokes, which moves every hunk below. Each keystroke is an incremental didChange,
followed at once by a cheap request (`stet/listHunks` of a document with no hunks); the
server handles messages in order, so the answer arrives once the didChange is handled.
A third series sends the cheap request alone: its round trip is the transport floor, and
(keystroke + request) minus it estimates the handling alone.

Keystrokes follow each other with no pause (faster than any typist), so the server's
100 ms debounced publish of diagnostics does not run between them; its cost after a
pause is measured separately: the time from the last keystroke to the publishDiagnostics
of the busy document (which includes the 100 ms debounce).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from common import fresh_dir, line, remove, save_json, start_stet, summary
from lspclient import rng
from workload import code_lines, file_uri, scatter_changes, write_file

LINES = 20_000
HUNKS = 2_000


async def main(keystrokes: int, pauses: int) -> dict:
    root = fresh_dir("typing")
    try:
        rnd = random.Random(5)
        base = code_lines(LINES, rnd, tag="ty")
        new = scatter_changes(base, HUNKS, rnd)
        busy_path, quiet_path = root / "busy.py", root / "quiet.py"
        write_file(busy_path, "".join(base))
        write_file(quiet_path, "".join(base))
        busy, quiet = file_uri(busy_path), file_uri(quiet_path)
        server, _, _ = await start_stet(root, root / "server.log")
        try:
            edit = {"changes": {busy: [{"range": rng(0, 0, LINES, 0), "newText": "".join(new)}]}}
            res = await server.request("stet/propose", {"proposalId": "typing", "edit": edit})
            assert len(res["hunks"]) == HUNKS
            starts = sorted(h["range"]["start"]["line"] for h in res["hunks"])
            # A line in the middle that no hunk covers: the line just before a hunk's start
            # is unchanged context (hunks are separated by unchanged lines).
            target = starts[len(starts) // 2] - 1
            server.open(busy, "".join(base))
            server.open(quiet, "".join(base))
            probe = {"uri": quiet}
            for _ in range(20):  # warm up
                await server.request("stet/listHunks", probe)
            t_busy, t_quiet, t_probe = [], [], []
            col = {busy: len(base[target]) - 1, quiet: len(base[target]) - 1}
            row = {busy: target, quiet: target}

            def keystroke(uri: str, k: int) -> None:
                text = "\n" if k % 20 == 19 else "x"
                server.change(uri, [(rng(row[uri], col[uri], row[uri], col[uri]), text)])
                if text == "\n":
                    row[uri] += 1
                    col[uri] = 0
                else:
                    col[uri] += 1

            for k in range(keystrokes):
                # Which document goes first alternates: the first message after the probe's
                # answer finds the server idle (its reader thread asleep) and pays for waking it.
                for uri, out in (
                    ((quiet, t_quiet), (busy, t_busy)) if k % 2 == 0 else ((busy, t_busy), (quiet, t_quiet))
                ):
                    keystroke(uri, k)
                    _, t = await server.timed_request("stet/listHunks", probe)
                    out.append(t)
                _, t = await server.timed_request("stet/listHunks", probe)
                t_probe.append(t)
            # Check that no hunk was lost or moved wrongly: all still pending.
            after = (await server.request("stet/listHunks", {"uri": busy}))["hunks"]
            pending = sum(1 for h in after if h["status"] == "pending")
            # After a pause: from a keystroke to the diagnostics of the busy document.
            publish = []
            for k in range(pauses):
                await asyncio.sleep(0.3)
                seen = server.wait_notification("textDocument/publishDiagnostics")
                t0 = time.perf_counter()
                keystroke(busy, k)
                await server.drain()
                params, t1 = await asyncio.wait_for(seen, 10)
                publish.append(t1 - t0)
        finally:
            await server.stop()
        sb, sq, sp = summary(t_busy), summary(t_quiet), summary(t_probe)
        handling = {
            "busy_ms": sb["median"] - sp["median"],
            "quiet_ms": sq["median"] - sp["median"],
        }
        out = {
            "keystroke_busy": sb,
            "keystroke_quiet": sq,
            "probe_alone": sp,
            "handling_estimate": handling,
            "publish_after_pause": summary(publish),
            "pending_after": pending,
            "hunks": HUNKS,
            "lines": LINES,
            "keystrokes": keystrokes,
        }
        print(f"Typing: didChange + request, document with {HUNKS} pending hunks vs none ({LINES} lines)")
        print(line("keystroke in the document with hunks", sb, sq))
        print(line("keystroke in the document without (floor)", sq))
        print(line("request alone (transport)", sp))
        print(f"  handling alone (minus transport): {handling['busy_ms']:.3f} ms vs {handling['quiet_ms']:.3f} ms")
        print(line("keystroke after a pause -> diagnostics", out["publish_after_pause"]))
        print(f"  hunks still pending after typing: {pending}/{HUNKS}")
        return out
    finally:
        remove(root)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--keystrokes", type=int, default=400)
    ap.add_argument("--pauses", type=int, default=10)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = asyncio.run(main(args.keystrokes, args.pauses))
    if args.save:
        save_json("typing", data)
