"""The store on its own: layout, pragmas, migrations, quarantine, newer schemas."""

import os
import sqlite3
import stat

import pytest

from stet.errors import StoreUnavailable
from stet.store import Store
from stet.store.errors import ConstraintError
from stet.store.schema import SCHEMA_VERSION
from support.harness import Session, rng, uri


async def test_fresh_store_layout_and_pragmas(tmp_path):
    path = tmp_path / ".stet" / "stet.db"
    opened = await Store.open(str(path))
    try:
        assert opened.notice is None
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert (tmp_path / ".stet" / ".gitignore").read_text() == "*\n"
        conn = opened.store.conn
        assert (await conn.execute_fetchall("PRAGMA journal_mode"))[0][0] == "wal"
        assert (await conn.execute_fetchall("PRAGMA synchronous"))[0][0] == 2  # FULL
        assert (await conn.execute_fetchall("PRAGMA foreign_keys"))[0][0] == 1
        assert (await conn.execute_fetchall("PRAGMA user_version"))[0][0] == SCHEMA_VERSION
        assert (await conn.execute_fetchall("PRAGMA busy_timeout"))[0][0] > 0
    finally:
        await opened.store.close()


async def test_only_derived_records_are_committed_at_normal_and_full_always_comes_back(tmp_path):
    """Contract (docs/protocol.md, "What is durable when"): a derived record may skip the wait for the disk, a
    decision never; the connection is back at FULL after either, committed or rolled back."""
    store = (await Store.open(str(tmp_path / "s.db"))).store

    async def synchronous() -> int:
        return (await store.conn.execute_fetchall("PRAGMA synchronous"))[0][0]

    try:
        async with store.write(derived=True) as tx:
            await tx.log("op-1", "effect", {})
            during = tx.read_at_commit("PRAGMA synchronous")
        assert during.rows == [(1,)] and await synchronous() == 2  # NORMAL for it, FULL after
        async with store.write() as tx:
            await tx.log("op-2", "decide", {})
            during = tx.read_at_commit("PRAGMA synchronous")
        assert during.rows == [(2,)] and await synchronous() == 2
        with pytest.raises(RuntimeError):
            async with store.write(derived=True) as tx:
                await tx.log("op-3", "effect", {})
                await tx.op("op-1")  # a hop: the transaction has begun at NORMAL
                raise RuntimeError("boom")
        assert await synchronous() == 2 and await store.last_lsn() == 2
    finally:
        await store.close()


async def test_transaction_rolls_back_on_error(tmp_path):
    opened = await Store.open(str(tmp_path / "s.db"))
    store = opened.store
    try:
        with pytest.raises(RuntimeError):
            async with store.write() as tx:
                await tx.log("op-1", "test", {})
                raise RuntimeError("boom")
        assert await store.last_lsn() == 0
        async with store.write() as tx:
            await tx.log("op-1", "test", {})
        assert await store.last_lsn() == 1
        with pytest.raises(ConstraintError):  # op ids are unique
            async with store.write() as tx:
                await tx.log("op-1", "test", {})
    finally:
        await store.close()


async def test_garbage_database_is_quarantined_never_deleted(tmp_path):
    path = tmp_path / ".stet" / "stet.db"
    path.parent.mkdir()
    garbage = b"this is not a database, but someone's data" * 100
    path.write_bytes(garbage)
    opened = await Store.open(str(path))
    try:
        assert "moved it to" in opened.notice
        (folder,) = list((tmp_path / ".stet" / "quarantine").iterdir())
        assert (folder / "stet.db").read_bytes() == garbage
        assert await opened.store.last_lsn() == 0  # a fresh, working store
    finally:
        await opened.store.close()


async def test_truncated_database_is_quarantined(tmp_path):
    path = tmp_path / "s.db"
    con = sqlite3.connect(path)
    con.execute("create table t (x)")
    con.executemany("insert into t values (?)", [("x" * 500,)] * 2000)
    con.commit()
    con.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    opened = await Store.open(str(path))
    try:
        assert opened.notice and "damaged" in opened.notice
        assert len(list((tmp_path / "quarantine").iterdir())) == 1
    finally:
        await opened.store.close()


async def test_newer_schema_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "s.db"
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreUnavailable) as err:
        await Store.open(str(path))
    assert "newer Stet" in str(err.value) and "Upgrade" in str(err.value)
    assert path.read_bytes() == before
    assert not (tmp_path / "quarantine").exists()


async def test_server_with_corrupt_store_tells_the_user_and_starts_fresh(ws):
    db = ws / ".stet" / "stet.db"
    db.parent.mkdir()
    db.write_bytes(b"garbage" * 1000)
    s = Session(ws)
    restored = await s.start()
    try:
        assert restored["counts"]["pending"] == 0
        assert any("moved it to" in m.message for m in s.messages)
        res = await s.propose("p", {uri(ws / "a.py"): [(rng(0, 0, 1, 0), "x\n")]})
        assert len(res["hunks"]) == 1
        assert list((ws / ".stet" / "quarantine").iterdir())
    finally:
        await s.stop()


async def test_server_with_unusable_store_answers_store_unavailable(ws):
    db = ws / ".stet" / "stet.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    s = Session(ws)
    restored = await s.start()
    try:
        assert "newer Stet" in restored.get("error", "")
        from pygls.exceptions import JsonRpcException

        with pytest.raises(JsonRpcException) as err:
            await s.hunks()
        assert err.value.code == -32005 and "newer Stet" in err.value.message
    finally:
        await s.stop()
