"""Should SQLAlchemy Core carry the store's two dialects? The store's own layer (statement
tables per engine, one hop to the store's thread per read: server/stet/store/) against
SQLAlchemy Core doing the same work, on copies of the same SQLite store, measured in the same
run, round by round in turn.

- decision: one accept as the review makes it (the op and the hunk read, the op logged, the
  hunk saved, an effect journaled, the changed hunks read with the COMMIT), durable (WAL,
  synchronous=FULL, BEGIN IMMEDIATE).
- list: every hunk of the store (--hunks of them) read into the domain's Hunk objects.
- import: a fresh interpreter importing the layer, against `python -c pass` (the CLI's budget,
  the instant path's target: at most 3x `python -c pass`).

SQLAlchemy is measured two ways: its asyncio engine over aiosqlite (one hop to the thread per
statement: how an asyncio program uses it), and its synchronous engine run on one thread of its
own (one hop per transaction, as the store's layer does). Needs the `bench` extra (sqlalchemy).

    python benchmarks/bench_sql_layer.py --hunks 1000 --rounds 200
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import PY, fresh_dir, line, remove, summary
from stet.domain.effect_outcome import Action
from stet.domain.model import Hunk, Kind
from stet.domain.status import Status
from stet.store.rows import HUNK_COLUMNS, Shared, hunk_from_row, now_iso
from stet.store.sqlite import Store


def make_hunks(n: int, files: int = 10) -> list[Hunk]:
    return [
        Hunk(
            id=f"h{i:05d}",
            proposal_id="p1",
            task_id="t1",
            seq=i,
            uri=f"file:///ws/f{i % files}.py",
            kind=Kind.EDIT,
            status=Status.PENDING,
            line=i // files * 10 + 1,
            old=(f"line {i}\n",),
            new=(f"LINE {i}\n",),
            ctx_before=(f"before {i}\n", "\n"),
            ctx_after=("\n", f"after {i}\n"),
            lsn=1,
        )
        for i in range(n)
    ]


async def seed(path: Path, n: int) -> None:
    store = (await Store.open(str(path))).store
    try:
        async with store.write() as tx:
            lsn = await tx.log("op-propose", "propose", {"id": "p1"})
            await tx.add_proposal("p1", "t1", "agent", "a message", "e#", "r#", lsn)
            await tx.add_hunks(make_hunks(n))
    finally:
        await store.close()


def _edit(h: Hunk) -> list[dict[str, Any]]:
    return [{"hunkId": h.id, "line": h.line, "before": h.old_text, "after": h.new_text}]


# --- the store's own layer ------------------------------------------------------------------
class Own:
    name = "store layer (aiosqlite, statement tables)"

    def __init__(self, store: Store):
        self.store = store

    async def decide(self, i: int) -> None:
        hid, op_id = f"h{i:05d}", f"op-accept-{i}"
        async with self.store.write() as tx:
            _, hunks = await tx.op_and_hunks(op_id, [hid])
            lsn = await tx.log(op_id, "accept", {"hunkIds": [hid]})
            h = hunks[hid]
            h.status, h.lsn, h.version, h.decided_at = Status.ACCEPTED, lsn, h.version + 1, now_iso()
            await tx.save_hunks([h])
            await tx.add_effect(lsn, h.uri, Action.APPLY, _edit(h))
            tx.hunks_since_at_commit(lsn - 1)

    async def list_all(self) -> int:
        return len(await self.store.hunks_since(0))


# --- SQLAlchemy Core ------------------------------------------------------------------------
def tables() -> Any:
    from sqlalchemy import Column, Integer, MetaData, Table, Text

    meta = MetaData()
    text_cols = ("proposal_id", "task_id", "uri", "kind", "new_uri", "status", "old_text", "new_text")
    hunks = Table(
        "hunks",
        meta,
        Column("id", Text, primary_key=True),
        *[Column(c, Text) for c in text_cols],
        *[Column(c, Text) for c in ("ctx_before", "ctx_after", "applied_text", "message", "feedback", "decided_at")],
        *[Column(c, Integer) for c in ("seq", "line", "version", "lsn", "in_file", "kept")],
        Column("problem", Text),
    )
    oplog = Table(
        "oplog",
        meta,
        Column("lsn", Integer, primary_key=True),
        *[Column(c, Text) for c in ("op_id", "kind", "args", "result", "at")],
    )
    effects = Table(
        "effects",
        meta,
        Column("id", Integer, primary_key=True),
        Column("lsn", Integer),
        Column("attempts", Integer),
        *[Column(c, Text) for c in ("uri", "action", "edits", "state", "target", "owner", "at")],
    )
    proposals = Table("proposals", meta, Column("id", Text, primary_key=True), Column("message", Text))
    return hunks, oplog, effects, proposals


class Core:
    """The same statements in SQLAlchemy Core (compiled once and cached by SQLAlchemy)."""

    def __init__(self) -> None:
        from sqlalchemy import bindparam, func, insert, select, update

        self.hunks, self.oplog, self.effects, self.proposals = hunks, oplog, effects, proposals = tables()
        cols = [hunks.c[c.strip()] for c in HUNK_COLUMNS.split(",")]
        self.op_by_id = select(oplog).where(oplog.c.op_id == bindparam("op_id"))
        self.by_ids = select(*cols).where(hunks.c.id.in_(bindparam("ids", expanding=True)))
        self.since = select(*cols).where(hunks.c.lsn > bindparam("lsn")).order_by(hunks.c.lsn)
        self.next_ids = select(
            func.coalesce(func.max(oplog.c.lsn), 0), select(func.coalesce(func.max(effects.c.id), 0)).scalar_subquery()
        )
        self.log = insert(oplog)
        self.save = (
            update(hunks)
            .where(hunks.c.id == bindparam("hid"))
            .values(status=bindparam("st"), lsn=bindparam("l"), version=bindparam("v"), decided_at=bindparam("d"))
        )
        self.effect = insert(effects)
        self.messages = select(proposals.c.id, proposals.c.message).where(
            proposals.c.id.in_(bindparam("ids", expanding=True))
        )

    def hunks_of(self, rows: list[Any], messages: list[Any]) -> list[Hunk]:
        shared = Shared()
        out = [hunk_from_row(tuple(r), shared) for r in rows]
        by_id = {r[0]: r[1] for r in messages}
        for h in out:
            h.message = by_id.get(h.proposal_id)
        return out

    @staticmethod
    def log_args(op_id: str, hid: str, lsn: int) -> dict[str, Any]:
        args = json.dumps({"hunkIds": [hid]})
        return {"lsn": lsn, "op_id": op_id, "kind": "accept", "args": args, "result": None, "at": now_iso()}

    @staticmethod
    def save_args(h: Hunk, lsn: int) -> list[dict[str, Any]]:
        return [{"hid": h.id, "st": "accepted", "l": lsn, "v": h.version + 1, "d": now_iso()}]

    @staticmethod
    def effect_args(h: Hunk, lsn: int, eid: int) -> dict[str, Any]:
        return {
            "id": eid,
            "lsn": lsn,
            "uri": h.uri,
            "action": "apply",
            "edits": json.dumps(_edit(h)),
            "state": "pending",
            "target": "file",
            "owner": None,
            "attempts": 0,
            "at": now_iso(),
        }


def _sqlite_events(sync_engine: Any) -> None:
    """Stet's store settings on SQLAlchemy's connections: WAL, synchronous=FULL, BEGIN IMMEDIATE."""
    from sqlalchemy import event

    @event.listens_for(sync_engine, "connect")
    def connect(dbapi: Any, record: Any) -> None:
        dbapi.isolation_level = None  # SQLAlchemy sends BEGIN itself (below)
        cur = dbapi.cursor()
        for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON", "busy_timeout=10000"):
            cur.execute(f"PRAGMA {pragma}")
        cur.close()

    @event.listens_for(sync_engine, "begin")
    def begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


class CoreSync:
    name = "SQLAlchemy Core, sync engine on one thread"

    def __init__(self, path: Path):
        from sqlalchemy import create_engine

        self.core = Core()
        self.engine = create_engine(f"sqlite:///{path}")
        _sqlite_events(self.engine)
        self.conn = self.engine.connect()
        self.pool = concurrent.futures.ThreadPoolExecutor(1)

    def _decide(self, i: int) -> None:
        core, c, hid, op_id = self.core, self.conn, f"h{i:05d}", f"op-accept-{i}"
        with c.begin():
            c.execute(core.op_by_id, {"op_id": op_id}).first()
            h = hunk_from_row(tuple(c.execute(core.by_ids, {"ids": [hid]}).all()[0]))
            lsn, eid = c.execute(core.next_ids).first()
            c.execute(core.log, core.log_args(op_id, hid, lsn + 1))
            c.execute(core.save, core.save_args(h, lsn + 1))
            c.execute(core.effect, core.effect_args(h, lsn + 1, eid + 1))
            c.execute(core.since, {"lsn": lsn}).all()

    def _list(self) -> int:
        with self.conn.begin():
            rows = self.conn.execute(self.core.since, {"lsn": 0}).all()
            messages = self.conn.execute(self.core.messages, {"ids": ["p1"]}).all()
        return len(self.core.hunks_of(rows, messages))

    async def decide(self, i: int) -> None:
        await asyncio.get_running_loop().run_in_executor(self.pool, self._decide, i)

    async def list_all(self) -> int:
        return await asyncio.get_running_loop().run_in_executor(self.pool, self._list)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self.pool, self.conn.close)
        self.pool.shutdown()


class CoreAsync:
    name = "SQLAlchemy Core, asyncio engine (aiosqlite)"

    def __init__(self, path: Path):
        self.path = path
        self.core = Core()

    async def start(self) -> None:
        from sqlalchemy.ext.asyncio import create_async_engine

        self.engine = create_async_engine(f"sqlite+aiosqlite:///{self.path}")
        _sqlite_events(self.engine.sync_engine)
        self.conn = await self.engine.connect()

    async def decide(self, i: int) -> None:
        core, c, hid, op_id = self.core, self.conn, f"h{i:05d}", f"op-accept-{i}"
        async with c.begin():
            (await c.execute(core.op_by_id, {"op_id": op_id})).first()
            h = hunk_from_row(tuple((await c.execute(core.by_ids, {"ids": [hid]})).all()[0]))
            lsn, eid = (await c.execute(core.next_ids)).first()
            await c.execute(core.log, core.log_args(op_id, hid, lsn + 1))
            await c.execute(core.save, core.save_args(h, lsn + 1))
            await c.execute(core.effect, core.effect_args(h, lsn + 1, eid + 1))
            (await c.execute(core.since, {"lsn": lsn})).all()

    async def list_all(self) -> int:
        async with self.conn.begin():
            rows = (await self.conn.execute(self.core.since, {"lsn": 0})).all()
            messages = (await self.conn.execute(self.core.messages, {"ids": ["p1"]})).all()
        return len(self.core.hunks_of(rows, messages))

    async def close(self) -> None:
        await self.conn.close()
        await self.engine.dispose()


# --- runs -------------------------------------------------------------------------------------
async def timed(layers: list[Any], rounds: int, what: str, warm: int) -> dict[str, list[float]]:
    """Round by round, each layer in turn (the same machine load for each)."""
    out: dict[str, list[float]] = {layer.name: [] for layer in layers}
    for i in range(warm + rounds):
        for layer in layers:
            t = time.perf_counter()
            await (layer.decide(i) if what == "decide" else layer.list_all())
            if i >= warm:
                out[layer.name].append(time.perf_counter() - t)
    return out


def import_times(runs: int) -> dict[str, list[float]]:
    programs = {
        "python -c pass": "pass",
        "import the store's layer (stet.store.sqlite)": "import stet.store.sqlite",
        "import sqlalchemy + its sqlite dialect": "import sqlalchemy, sqlalchemy.dialects.sqlite",
        "import sqlalchemy.ext.asyncio": "import sqlalchemy.ext.asyncio, sqlalchemy.dialects.sqlite",
    }
    out: dict[str, list[float]] = {name: [] for name in programs}
    for _ in range(runs):
        for name, program in programs.items():
            t = time.perf_counter()
            subprocess.run([PY, "-c", program], check=True)
            out[name].append(time.perf_counter() - t)
    return out


def report(title: str, samples: dict[str, list[float]], base: str) -> dict[str, dict]:
    print(title)
    stats = {name: summary(s) for name, s in samples.items()}
    for name, s in stats.items():
        print(line(name, s, None if name == base else stats[base]))
    return stats


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hunks", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=200, help="decisions per layer (at most --hunks)")
    ap.add_argument("--lists", type=int, default=50)
    ap.add_argument("--imports", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="a few rounds only")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.lists, args.imports = 30, 10, 5
    rounds = min(args.rounds, args.hunks - 5)
    folder = fresh_dir("sql-layer")
    try:
        first = folder / "own.db"
        await seed(first, args.hunks)
        for name in ("sync.db", "async.db"):
            shutil.copy(first, folder / name)
        own = Own((await Store.open(str(first))).store)
        sync, asy = CoreSync(folder / "sync.db"), CoreAsync(folder / "async.db")
        await asy.start()
        layers = [own, sync, asy]
        try:
            counts = {layer.name: await layer.list_all() for layer in layers}
            assert set(counts.values()) == {args.hunks}, counts
            decide = report(
                f"A decision (durable), {rounds} rounds each:", await timed(layers, rounds, "decide", 5), own.name
            )
            listing = report(
                f"Every hunk read into Hunk objects ({args.hunks} hunks), {args.lists} rounds each:",
                await timed(layers, args.lists, "list", 2),
                own.name,
            )
        finally:
            await own.store.close()
            await sync.close()
            await asy.close()
        imports = report(
            f"A fresh interpreter, {args.imports} runs each:", import_times(args.imports), "python -c pass"
        )
        if args.json:
            print(json.dumps({"hunks": args.hunks, "decision": decide, "list": listing, "import": imports}))
    finally:
        remove(folder)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
