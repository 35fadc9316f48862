"""Benchmark 8: bulk decisions. Accept, reject and undo N hunks in one call, N = 10 .. 10,000,
in files of 5,000 and of 50,000 lines, through a real `stet serve` (files closed in the editor,
so every decision is written to disk, as the CLI's are).

For each (file length L, N) the N hunks are spread evenly over as few files of L lines as hold
them (at most one hunk every 5 lines). Each round, not timed in between: accept all of them
(`stet.acceptAll` of the proposal), undo all (`stet.undo` with their ids), reject all
(`stet.rejectAll`), undo again. Reported: medians per operation, how each grows with N (the
exponent of a least-squares fit of log time on log N; 1 = linear) and undo / accept at each N.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time
from pathlib import Path

from common import fresh_dir, remove, save_json, start_stet, summary
from lspclient import Server, rng
from workload import code_lines, file_uri, write_file

SPACING = 5  # one changed line every SPACING lines at most: hunks never touch


def make_workspace(root: Path, length: int, n: int, seed: int = 11) -> list[tuple[Path, str, str]]:
    """Files of `length` lines holding `n` one-line changes in all; returns (path, base, proposed)."""
    rnd = random.Random(seed)
    per_file = length // SPACING
    files = []
    left = n
    k = 0
    while left > 0:
        count = min(per_file, left)
        base = code_lines(length, rnd, tag=f"b{k}_")[:length]
        step = length // count
        new = list(base)
        for i in range(count):
            at = i * step + step // 2
            new[at] = f"    changed_{k}_{i} = {rnd.randint(0, 10**6)}  # agent\n"
        path = root / "src" / f"bulk{k:03d}.py"
        write_file(path, "".join(base))
        files.append((path, "".join(base), "".join(new)))
        left -= count
        k += 1
    return files


async def propose(server: Server, files: list[tuple[Path, str, str]], pid: str) -> list[str]:
    edit = {"changes": {file_uri(p): [{"range": rng(0, 0, b.count("\n"), 0), "newText": n}] for p, b, n in files}}
    answer = await server.request("stet/propose", {"proposalId": pid, "edit": edit})
    return [h["id"] for h in answer["hunks"]]


async def command(server: Server, name: str, params: dict) -> tuple[list[dict], float]:
    result, took = await server.timed_request("workspace/executeCommand", {"command": name, "arguments": [params]})
    return result["hunks"], took


async def measure(length: int, n: int, rounds: int) -> dict:
    root = fresh_dir(f"bulk{length}-{n}")
    try:
        files = make_workspace(root, length, n)
        server, _, _ = await start_stet(root, root / "server.log")
        try:
            ids = await propose(server, files, "bulk")
            assert len(ids) == n, (len(ids), n)
            times: dict[str, list[float]] = {"accept": [], "undo_applied": [], "reject": [], "undo_rejected": []}
            for _ in range(rounds):
                hunks, t = await command(server, "stet.acceptAll", {"proposalId": "bulk"})
                assert len(hunks) == n and all(h["status"] == "applied" for h in hunks), "accept"
                times["accept"].append(t)
                hunks, t = await command(server, "stet.undo", {"hunkIds": ids})
                assert all(h["status"] == "pending" for h in hunks), "undo applied"
                times["undo_applied"].append(t)
                hunks, t = await command(server, "stet.rejectAll", {"proposalId": "bulk"})
                assert len(hunks) == n and all(h["status"] == "rejected" for h in hunks), "reject"
                times["reject"].append(t)
                hunks, t = await command(server, "stet.undo", {"hunkIds": ids})
                assert all(h["status"] == "pending" for h in hunks), "undo rejected"
                times["undo_rejected"].append(t)
            for path, base, _ in files:  # every undo put the text back
                assert path.read_text() == base, path
        finally:
            await server.stop()
        return {"lines": length, "hunks": n, "files": len(files), **{k: summary(v) for k, v in times.items()}}
    finally:
        remove(root)


def exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) on log(N)."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def growth(results: list[dict]) -> dict:
    out = {}
    for length in sorted({r["lines"] for r in results}):
        rows = sorted((r for r in results if r["lines"] == length), key=lambda r: r["hunks"])
        out[str(length)] = {
            op: exponent([(r["hunks"], r[op]["median"]) for r in rows])
            for op in ("accept", "undo_applied", "reject", "undo_rejected")
        }
        out[str(length)]["undo_over_accept"] = {
            str(r["hunks"]): r["undo_applied"]["median"] / r["accept"]["median"] for r in rows
        }
    return out


def report(res: dict) -> None:
    print(
        f"L = {res['lines']:>6} lines, N = {res['hunks']:>6} hunks in {res['files']} file(s): "
        + "  ".join(f"{op} {res[op]['median']:9.1f} ms" for op in ("accept", "undo_applied", "reject", "undo_rejected"))
        + f"  undo/accept {res['undo_applied']['median'] / res['accept']['median']:.2f}x"
    )


async def main(lengths: list[int], sizes: list[int], rounds: int) -> dict:
    results = []
    t0 = time.perf_counter()
    for length in lengths:
        for n in sizes:
            if n > length // SPACING * 20:  # more than 20 files: not the case this measures
                continue
            res = await measure(length, n, rounds if n < 10_000 else max(1, rounds - 1))
            report(res)
            results.append(res)
    g = growth(results)
    for length, e in g.items():
        exps = ", ".join(f"{op} {v:.2f}" for op, v in e.items() if op != "undo_over_accept" and v is not None)
        print(f"growth exponent in N, files of {length} lines: {exps}")
    return {"results": results, "growth": g, "seconds": time.perf_counter() - t0}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="5000,50000")
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    data = asyncio.run(
        main([int(x) for x in args.lengths.split(",")], [int(x) for x in args.sizes.split(",")], args.rounds)
    )
    if args.save:
        save_json("bulk", data)
