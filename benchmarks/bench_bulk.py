"""Benchmark 8: bulk decisions. Accept, reject and undo N hunks in one call, N = 10 .. 10,000,
in files of 5,000 and of 50,000 lines, through a real `stet serve` (files closed in the editor,
so every decision is written to disk, as the CLI's are).

For each (file length L, N) the N hunks are spread evenly over as few files of L lines as hold
them (at most one hunk every 5 lines). Every case gets its own workspace and server, all
started first; then each round runs every case in turn (the order rotates from round to
round, so the machine's load drifts over all of them alike): accept all of them
(`stet.acceptAll` of the proposal), undo all (`stet.undo` with their ids), reject all
(`stet.rejectAll`), undo again. Timed: from sending the command to reading its answer (the
decisions durable, the files written); also until the last `stet/hunksChanged` of the
operation has arrived (what an editor then shows). The next operation starts only once that
publication is in, so each is timed alone.

Reported: medians and p99 per operation, the growth exponent of each operation in N (the
slope of log time over each tenfold step of N; the headline is the last step, where a
superlinear term shows most) and undo / accept at each N (medians of the same rounds).
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
OPS = ("accept", "undo_applied", "reject", "undo_rejected")


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


class Case:
    """One (file length, N): its workspace, its server, its hunks."""

    def __init__(self, length: int, n: int):
        self.length, self.n = length, n
        self.root = fresh_dir(f"bulk{length}-{n}")
        self.files = make_workspace(self.root, length, n)
        self.server: Server | None = None
        self.ids: list[str] = []
        self.times: dict[str, list[float]] = {op: [] for op in OPS}
        self.shown: dict[str, list[float]] = {op: [] for op in OPS}
        self._published = 0
        self._last_published = 0.0

    async def start(self) -> None:
        self.server, _, _ = await start_stet(self.root, self.root / "server.log")
        self.server.handlers["stet/hunksChanged"] = self._on_published
        self.ids = await propose(self.server, self.files, "bulk")
        assert len(self.ids) == self.n, (len(self.ids), self.n)
        await self._settle(len(self.files))

    def _on_published(self, _params: dict) -> None:
        self._published += 1
        self._last_published = time.perf_counter()

    async def _settle(self, expected: int, quiet: float = 0.05, timeout: float = 120.0) -> None:
        """Wait until `expected` hunksChanged notifications have arrived since the last reset
        and none for `quiet` seconds (a publication may come in two bursts)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            now = time.perf_counter()
            if self._published >= expected and now - self._last_published >= quiet:
                return
            await asyncio.sleep(0.002)
        raise TimeoutError(f"{expected} publications expected, {self._published} arrived")

    async def run(self, op: str, command: str, params: dict, status: str) -> None:
        self._published = 0
        t0 = time.perf_counter()
        result, took = await self.server.timed_request(
            "workspace/executeCommand", {"command": command, "arguments": [params]}
        )
        hunks = result["hunks"]
        assert len(hunks) == self.n and all(h["status"] == status for h in hunks), (op, self.n)
        await self._settle(len(self.files))
        self.times[op].append(took)
        self.shown[op].append(self._last_published - t0)

    async def round(self) -> None:
        # Small cases are quick and noisier: more samples of them per round.
        for _ in range(5 if self.n <= 100 else 2 if self.n <= 1000 else 1):
            await self.run("accept", "stet.acceptAll", {"proposalId": "bulk"}, "applied")
            await self.run("undo_applied", "stet.undo", {"hunkIds": self.ids}, "pending")
            await self.run("reject", "stet.rejectAll", {"proposalId": "bulk"}, "rejected")
            await self.run("undo_rejected", "stet.undo", {"hunkIds": self.ids}, "pending")

    async def stop(self) -> dict:
        try:
            for path, base, _ in self.files:  # every undo put the text back
                assert path.read_text() == base, path
        finally:
            if self.server is not None:
                await self.server.stop()
            remove(self.root)
        return {
            "lines": self.length,
            "hunks": self.n,
            "files": len(self.files),
            **{op: summary(v) for op, v in self.times.items()},
            "shown": {op: summary(v) for op, v in self.shown.items()},
        }


def exponent(n0: int, t0: float, n1: int, t1: float) -> float | None:
    return math.log(t1 / t0) / math.log(n1 / n0) if t0 > 0 and t1 > 0 and n1 != n0 else None


def growth(results: list[dict]) -> dict:
    """Per file length and operation: the exponent over each tenfold step of N, the last
    step's (the headline), and undo / accept at each N."""
    out = {}
    for length in sorted({r["lines"] for r in results}):
        rows = sorted((r for r in results if r["lines"] == length), key=lambda r: r["hunks"])
        g: dict = {"steps": {}, "last": {}}
        for op in OPS:
            steps = [
                (a["hunks"], b["hunks"], exponent(a["hunks"], a[op]["median"], b["hunks"], b[op]["median"]))
                for a, b in zip(rows, rows[1:])
            ]
            g["steps"][op] = [{"from": a, "to": b, "exponent": e} for a, b, e in steps]
            g["last"][op] = steps[-1][2] if steps else None
        g["undo_over_accept"] = {str(r["hunks"]): r["undo_applied"]["median"] / r["accept"]["median"] for r in rows}
        out[str(length)] = g
    return out


def report(res: dict) -> None:
    print(
        f"L = {res['lines']:>6} lines, N = {res['hunks']:>6} hunks in {res['files']:>2} file(s): "
        + "  ".join(f"{op} {res[op]['median']:8.1f} ms" for op in OPS)
        + f"  undo/accept {res['undo_applied']['median'] / res['accept']['median']:.2f}x"
    )


async def main(lengths: list[int], sizes: list[int], rounds: int) -> dict:
    t_start = time.perf_counter()
    cases = [Case(length, n) for length in lengths for n in sizes if n <= length // SPACING * 20]
    results = []
    try:
        for case in cases:
            await case.start()
        for r in range(rounds):
            k = r % len(cases)
            for case in cases[k:] + cases[:k]:
                await case.round()
    finally:
        for case in cases:
            results.append(await case.stop())
    for res in results:
        report(res)
    g = growth(results)
    for length, e in g.items():
        exps = ", ".join(f"{op} {v:.2f}" for op, v in e["last"].items() if v is not None)
        print(f"growth exponent over the last tenfold step of N, files of {length} lines: {exps}")
    return {"results": results, "growth": g, "rounds": rounds, "seconds": time.perf_counter() - t_start}


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
