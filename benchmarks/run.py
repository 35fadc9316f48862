"""`make bench`: run every benchmark against a real `stet serve` over stdio, then write
docs/BENCHMARKS.md (tables, plots) from what this run measured.

    python benchmarks/run.py            # the full set, about 5 minutes on 2 cores
    python benchmarks/run.py --quick    # smaller sizes and fewer rounds, about 3 minutes
    python benchmarks/run.py --only ingest,typing,bulk,cli,baseline

Raw results go to docs/benchmarks/*.json, plots to docs/benchmarks/*.png.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import subprocess
import sys
import time

import bench_baseline
import bench_bulk
import bench_checkpoint
import bench_cli
import bench_engines
import bench_http_hooks
import bench_ingest
import bench_instant
import bench_scale
import bench_typing
import report
from common import REPO, compile_server, load_json, machine, save_json

PROFILES = {
    "full": {
        "scale": {"sizes": [100, 1000, 10000, 100000], "restarts": [3, 3, 5, 3], "rounds": [150, 150, 300, 100]},
        "ingest": {"rounds": 12},
        "typing": {"keystrokes": 400, "pauses": 10},
        "checkpoint": {"intervals": [1, 5, 25, 100, None], "edits": 400, "repeats": 2},
        "bulk": {"lengths": [5000, 50000], "sizes": [10, 100, 1000, 10000], "rounds": 5},
        "cli": {"rounds": 15},
        "instant": {"rounds": 11},
        "engines": {"hunks": 1000, "rounds": 150, "restarts": 3},
        "http_hooks": {"rounds": 200},
        "baseline": {"rounds": 7},
    },
    "quick": {
        "scale": {"sizes": [100, 1000, 10000], "restarts": [3, 3, 3], "rounds": [50, 50, 100]},
        "ingest": {"rounds": 4},
        "typing": {"keystrokes": 100, "pauses": 3},
        "checkpoint": {"intervals": [1, 25, None], "edits": 100, "repeats": 1},
        "bulk": {"lengths": [5000, 50000], "sizes": [10, 100, 1000], "rounds": 2},
        "cli": {"rounds": 6},
        "instant": {"rounds": 4},
        "engines": {"hunks": 1000, "rounds": 50, "restarts": 2},
        "http_hooks": {"rounds": 50},
        "baseline": {"rounds": 3},
    },
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="scale,ingest,typing,checkpoint,bulk,cli,instant,engines,http_hooks,baseline")
    ap.add_argument("--slow", action="store_true", help="also time the quadratic diff engines on 50,000 lines")
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args()
    profile = "quick" if args.quick else "full"
    p = PROFILES[profile]
    only = set(args.only.split(","))
    started = time.perf_counter()
    load_start = open("/proc/loadavg").read().split()[:3]
    meta = load_json("run") or {}
    durations = meta.get("durations", {})
    compile_server()  # every process starts as an installed Stet does: byte-compiled
    if "scale" in only:
        t = time.perf_counter()
        s = p["scale"]
        save_json("scale", asyncio.run(bench_scale.main(s["sizes"], s["restarts"], s["rounds"])))
        durations["scale"] = time.perf_counter() - t
    if "ingest" in only:
        t = time.perf_counter()
        save_json("ingest", asyncio.run(bench_ingest.main(p["ingest"]["rounds"], args.slow)))
        durations["ingest"] = time.perf_counter() - t
    if "typing" in only:
        t = time.perf_counter()
        save_json("typing", asyncio.run(bench_typing.main(p["typing"]["keystrokes"], p["typing"]["pauses"])))
        durations["typing"] = time.perf_counter() - t
    if "checkpoint" in only:
        t = time.perf_counter()
        c = p["checkpoint"]
        save_json("checkpoint", asyncio.run(bench_checkpoint.main(c["intervals"], c["edits"], c["repeats"])))
        durations["checkpoint"] = time.perf_counter() - t
    if "bulk" in only:
        t = time.perf_counter()
        b = p["bulk"]
        save_json("bulk", asyncio.run(bench_bulk.main(b["lengths"], b["sizes"], b["rounds"])))
        durations["bulk"] = time.perf_counter() - t
    if "cli" in only:
        t = time.perf_counter()
        save_json("cli", bench_cli.main(p["cli"]["rounds"]))
        durations["cli"] = time.perf_counter() - t
    if "instant" in only:
        t = time.perf_counter()
        save_json("instant", bench_instant.main(p["instant"]["rounds"], os.environ.get("STET_TEST_PG")))
        durations["instant"] = time.perf_counter() - t
    if "engines" in only:
        t = time.perf_counter()
        e = p["engines"]
        save_json("engines", asyncio.run(bench_engines.main(e["hunks"], e["rounds"], e["restarts"])))
        durations["engines"] = time.perf_counter() - t
    if "http_hooks" in only:
        t = time.perf_counter()
        save_json("http_hooks", bench_http_hooks.main(p["http_hooks"]["rounds"]))
        durations["http_hooks"] = time.perf_counter() - t
    if "baseline" in only:
        t = time.perf_counter()
        save_json("baseline", bench_baseline.main(p["baseline"]["rounds"]))
        durations["baseline"] = time.perf_counter() - t
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "server"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    meta = {
        "profile": profile,
        "command": "make bench" + (" BENCH_ARGS=--quick" if args.quick else ""),
        "argv": sys.argv[1:],
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (server/ modified)" if dirty else ""),
        "durations": durations,
        "total_s": time.perf_counter() - started,
        "machine": machine(),
        "load_at_start": load_start,
        "load_at_end": open("/proc/loadavg").read().split()[:3],
    }
    save_json("run", meta)
    if not args.no_report:
        out = report.write()
        print(f"wrote {out}")
    print(f"benchmarks took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
