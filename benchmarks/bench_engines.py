"""Benchmark 10: the accept round trip and the restart on each store engine, side by side.

The same workspace (N pending hunks) and the same measurements on SQLite (the workspace's
.stet/stet.db) and on PostgreSQL (a database of its own in the cluster STET_BENCH_PG or
STET_TEST_PG names; without either, a private cluster started by .ci/pg-cluster in a temp
folder for the run). Accept: one file open in the editor, each round accepts one of its
hunks and undoes it (the accept timed: durable, applied, answered). Restart: spawn to
`stet/restored`. The ratio is PostgreSQL's median over SQLite's.

    python benchmarks/bench_engines.py --hunks 1000 --rounds 100 --restarts 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from common import REPO, fresh_dir, make_files, propose_files, remove, save_json, start_stet, summary
from workload import file_uri

CLUSTER = REPO / ".ci" / "pg-cluster"


class Cluster:
    """The PostgreSQL to measure against: given, or started here (and stopped after)."""

    def __init__(self) -> None:
        self.admin = os.environ.get("STET_BENCH_PG") or os.environ.get("STET_TEST_PG")
        self.folder: str | None = None

    def __enter__(self) -> Cluster:
        if not self.admin:
            self.folder = tempfile.mkdtemp(prefix="stet-bench-pg-")
            done = subprocess.run([str(CLUSTER), "start", self.folder], capture_output=True, text=True, check=True)
            self.admin = done.stdout.strip()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.folder:
            subprocess.run([str(CLUSTER), "stop", self.folder], capture_output=True)
            subprocess.run(["rm", "-rf", self.folder])

    def database(self) -> str:
        import psycopg

        name = "stet_bench_" + uuid.uuid4().hex[:10]
        assert self.admin
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return urlunsplit(urlsplit(self.admin)._replace(path="/" + name))

    def drop(self, url: str) -> None:
        import psycopg

        assert self.admin
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path[1:]}" WITH (FORCE)')


async def measure(root: Path, db: str | None, paths: list[Path], rounds: int, restarts: int) -> dict:
    restart = []
    for _ in range(restarts):
        server, _, took = await start_stet(root, root / "server.log", db)
        await server.stop()
        restart.append(took)
    server, _, _ = await start_stet(root, root / "server.log", db)
    try:
        hot = file_uri(paths[0])
        server.open(hot, paths[0].read_text())
        ids = [h["id"] for h in (await server.request("stet/listHunks", {"uri": hot, "status": ["pending"]}))["hunks"]]
        accept, undo = [], []
        for r in range(rounds + 10):
            hid = ids[r % len(ids)]
            res, t_accept = await server.timed_request(
                "workspace/executeCommand", {"command": "stet.accept", "arguments": [{"hunkIds": [hid]}]}
            )
            assert res["hunks"][0]["status"] == "applied", res
            res, t_undo = await server.timed_request(
                "workspace/executeCommand", {"command": "stet.undo", "arguments": [{"hunkIds": [hid]}]}
            )
            assert res["hunks"][0]["status"] == "pending", res
            if r >= 10:
                accept.append(t_accept)
                undo.append(t_undo)
    finally:
        await server.stop()
    return {"accept": summary(accept), "undo": summary(undo), "restart": summary(restart)}


async def main(hunks: int = 1000, rounds: int = 100, restarts: int = 3) -> dict:
    out: dict = {"hunks": hunks, "rounds": rounds}
    with Cluster() as cluster:
        for engine in ("sqlite", "postgresql"):
            root = fresh_dir(f"engines-{engine}")
            db = cluster.database() if engine == "postgresql" else None
            try:
                files = make_files(root, max(1, hunks // 10))
                server, _, _ = await start_stet(root, root / "server.log", db)
                await propose_files(server, files)
                await server.stop()
                out[engine] = await measure(root, db, [p for p, _, _ in files], rounds, restarts)
            finally:
                remove(root)
                if db:
                    cluster.drop(db)
    for what in ("accept", "restart"):
        out[f"{what}_ratio"] = out["postgresql"][what]["median"] / out["sqlite"][what]["median"]
    return out


def report(res: dict) -> None:
    print(f"N = {res['hunks']} pending hunks, {res['rounds']} accepts + undos per engine")
    for engine in ("sqlite", "postgresql"):
        r = res[engine]
        print(
            f"  {engine:10s} accept median {r['accept']['median']:.2f} ms (p99 {r['accept']['p99']:.2f})  "
            f"undo {r['undo']['median']:.2f} ms  restart {r['restart']['median']:.0f} ms"
        )
    print(f"  PostgreSQL / SQLite: accept x{res['accept_ratio']:.2f}, restart x{res['restart_ratio']:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--hunks", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--restarts", type=int, default=3)
    a = ap.parse_args()
    res = asyncio.run(main(a.hunks, a.rounds, a.restarts))
    save_json("engines", res)  # docs/benchmarks/engines.json: report.py's section 10
    report(res)
