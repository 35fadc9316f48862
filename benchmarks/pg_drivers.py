"""Which PostgreSQL driver for Stet's store: one accept, as the store sends it, three ways.

An accept is one transaction: BEGIN, the repository's advisory lock, read the op log entry and
the hunk, insert the op log entry, update the hunk, insert the effect, COMMIT. Timed here with
psycopg 3 async (pipeline mode), psycopg 3 sync on a worker thread (pipeline mode: the way
the store's one-hop transactions run, see store/pg.py) and asyncpg (one round trip per
statement; it has no pipeline mode). Run: `python benchmarks/pg_drivers.py URL [N]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid

import asyncpg
import psycopg

SCHEMA = [
    "DROP TABLE IF EXISTS bench_oplog, bench_hunks, bench_effects",
    "CREATE TABLE bench_oplog (lsn BIGINT PRIMARY KEY, op_id TEXT UNIQUE NOT NULL, args TEXT NOT NULL)",
    "CREATE TABLE bench_hunks (id TEXT PRIMARY KEY, status TEXT NOT NULL, version BIGINT NOT NULL, lsn BIGINT)",
    "CREATE TABLE bench_effects (id BIGSERIAL PRIMARY KEY, lsn BIGINT NOT NULL, edits TEXT NOT NULL)",
]


def _ids(n: int) -> list[str]:
    return [f"h{i}" for i in range(n)]


async def psycopg_async(url: str, n: int) -> list[float]:
    out = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for i, hid in enumerate(_ids(n)):
            t = time.perf_counter()
            async with conn.pipeline():
                await conn.execute("BEGIN")
                await conn.execute("SELECT pg_advisory_xact_lock(1)")
                cur = await conn.execute("SELECT lsn FROM bench_oplog WHERE op_id = %s", (str(uuid.uuid4()),))
                cur2 = await conn.execute("SELECT id, status, version FROM bench_hunks WHERE id = %s", (hid,))
                await cur.fetchall()
                await cur2.fetchall()
                await conn.execute("INSERT INTO bench_oplog VALUES (%s, %s, %s)", (100000 + i, str(uuid.uuid4()), "{}"))
                await conn.execute(
                    "UPDATE bench_hunks SET status = 'accepted', version = version + 1 WHERE id = %s", (hid,)
                )
                await conn.execute("INSERT INTO bench_effects (lsn, edits) VALUES (%s, %s)", (100000 + i, "[]"))
                await conn.execute("COMMIT")
            out.append(time.perf_counter() - t)
    return out


async def psycopg_thread(url: str, n: int) -> list[float]:
    conn = await asyncio.to_thread(psycopg.connect, url, autocommit=True)
    out = []
    try:
        for i, hid in enumerate(_ids(n)):
            t = time.perf_counter()

            def hop1(hid: str = hid) -> None:
                with conn.pipeline():
                    conn.execute("BEGIN")
                    conn.execute("SELECT pg_advisory_xact_lock(1)")
                    a = conn.execute("SELECT lsn FROM bench_oplog WHERE op_id = %s", (str(uuid.uuid4()),))
                    b = conn.execute("SELECT id, status, version FROM bench_hunks WHERE id = %s", (hid,))
                    a.fetchall()
                    b.fetchall()

            def hop2(i: int = i, hid: str = hid) -> None:
                with conn.pipeline():
                    conn.execute("INSERT INTO bench_oplog VALUES (%s, %s, %s)", (200000 + i, str(uuid.uuid4()), "{}"))
                    conn.execute(
                        "UPDATE bench_hunks SET status = 'accepted', version = version + 1 WHERE id = %s", (hid,)
                    )
                    conn.execute("INSERT INTO bench_effects (lsn, edits) VALUES (%s, %s)", (200000 + i, "[]"))
                    conn.execute("COMMIT")

            await asyncio.to_thread(hop1)
            await asyncio.to_thread(hop2)
            out.append(time.perf_counter() - t)
    finally:
        conn.close()
    return out


async def with_asyncpg(url: str, n: int) -> list[float]:
    conn = await asyncpg.connect(url)
    out = []
    try:
        for i, hid in enumerate(_ids(n)):
            t = time.perf_counter()
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(1)")
                await conn.fetch("SELECT lsn FROM bench_oplog WHERE op_id = $1", str(uuid.uuid4()))
                await conn.fetch("SELECT id, status, version FROM bench_hunks WHERE id = $1", hid)
                await conn.execute("INSERT INTO bench_oplog VALUES ($1, $2, $3)", 300000 + i, str(uuid.uuid4()), "{}")
                await conn.execute(
                    "UPDATE bench_hunks SET status = 'accepted', version = version + 1 WHERE id = $1", hid
                )
                await conn.execute("INSERT INTO bench_effects (lsn, edits) VALUES ($1, $2)", 300000 + i, "[]")
            out.append(time.perf_counter() - t)
    finally:
        await conn.close()
    return out


async def main(url: str, n: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for s in SCHEMA:
            conn.execute(s)
        conn.cursor().executemany("INSERT INTO bench_hunks VALUES (%s, 'pending', 0, 0)", [(h,) for h in _ids(n)])
    for name, fn in (
        ("psycopg 3 async, pipeline", psycopg_async),
        ("psycopg 3 sync on a thread, pipeline (2 hops)", psycopg_thread),
        ("asyncpg", with_asyncpg),
    ):
        times = await fn(url, n)
        ms = sorted(t * 1000 for t in times)
        print(f"{name:48s} median {statistics.median(ms):6.2f} ms  p95 {ms[int(len(ms) * 0.95)]:6.2f} ms  (n={n})")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SCHEMA[0])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 500))
