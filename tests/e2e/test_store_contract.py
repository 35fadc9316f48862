"""The store's contract, on both engines: every public method of the store interface
(`StoreApi`), of a transaction (`Tx`) and of the task and capture tables, run on SQLite and on
PostgreSQL with the same expectations. PostgreSQL adds one rule of its own: two checkouts of
one review share the review, never each other's effects journal, file stamps or `inFile`."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from stet.domain.effect_outcome import Action, State
from stet.domain.model import Hunk, Kind
from stet.domain.status import Status
from stet.present import hunk_json
from stet.store import StoreApi, Tx, captures, loop, open_store, tasks
from stet.store.errors import ConstraintError

REPOSITORY = "acme/shop"


async def _open(engine, root: Path) -> StoreApi:
    root.mkdir(parents=True, exist_ok=True)
    opened = await open_store(engine.db(root), home=str(root / ".stet"), repository=REPOSITORY)
    assert opened.notice is None
    return opened.store


@pytest.fixture
async def store(engine, tmp_path):
    s = await _open(engine, tmp_path / "ws")
    yield s
    await s.close()


def _uri(store: StoreApi, name: str) -> str:
    return Path(store.home).parent.joinpath(name).as_uri()


def _hunk(hid: str, uri: str, *, proposal: str = "p1", task: str | None = "t1", seq: int = 0, line: int = 2) -> Hunk:
    return Hunk(
        id=hid,
        proposal_id=proposal,
        task_id=task,
        seq=seq,
        uri=uri,
        kind=Kind.EDIT,
        status=Status.PENDING,
        line=line,
        old=("line 2\n",),
        new=("LINE TWO\n",),
        ctx_before=("line 1\n",),
        ctx_after=("line 3\n",),
    )


async def _propose(store: StoreApi, hunks: list[Hunk], pid: str = "p1", message: str | None = "why") -> int:
    async with store.write() as tx:
        lsn = await tx.log(f"op-{pid}", "propose", {"id": pid})
        await tx.add_proposal(pid, "t1", "agent", message, "edit#", "result#", lsn)
        for h in hunks:
            h.lsn = lsn
        await tx.add_hunks(hunks)
        await tx.set_result(lsn, {"proposalId": pid})
    return lsn


async def test_op_log_proposals_and_a_unique_op_id(store):
    assert await store.last_lsn() == 0 and await store.ops() == [] and await store.op("nope") is None
    lsn = await _propose(store, [], message="the message")
    assert lsn == 1 and await store.last_lsn() == 1
    (op,) = await store.ops()
    assert (op.lsn, op.op_id, op.kind, op.args, op.result) == (
        1,
        "op-p1",
        "propose",
        {"id": "p1"},
        {"proposalId": "p1"},
    )
    assert await store.op("op-p1") == op and await store.ops(after_lsn=1) == []
    assert await store.proposal("p1") == {"id": "p1", "edit_hash": "edit#", "result_hash": "result#", "lsn": 1}
    record = await store.proposal_record("p1")
    assert record is not None and record["message"] == "the message" and record["agent"] == "agent"
    assert await store.proposal("p2") is None and await store.proposal_record("p2") is None
    async with store.read() as tx:
        assert await tx.op("op-p1") == op
        got = await tx.proposal("p1")
        assert got is not None and got["task_id"] == "t1" and got["message"] == "the message"
    with pytest.raises(ConstraintError):  # an op id is used once: the same error on both engines
        async with store.write() as tx:
            await tx.log("op-p1", "propose", {})
            await tx.add_effect(2, _uri(store, "a.py"), Action.APPLY, [])
    assert await store.last_lsn() == 1 and await store.open_effects() == []  # nothing of it stayed


async def test_hunks_are_added_read_decided_moved_and_followed_by_lsn(store):
    a, b = _uri(store, "a.py"), _uri(store, "b.py")
    h1, h2, h3 = _hunk("h1", a), _hunk("h2", a, seq=1, line=8), _hunk("h3", b, task=None)
    lsn = await _propose(store, [h1, h2, h3])
    since = await store.hunks_since(0)
    assert [h.id for h in since] == ["h1", "h2", "h3"]
    assert (since[0].uri, since[0].line, since[0].old, since[0].new, since[0].ctx_before) == (
        a,
        2,
        ("line 2\n",),
        ("LINE TWO\n",),
        ("line 1\n",),
    )
    assert {h.message for h in since} == {"why"}  # the proposal's message, stored once
    async with store.read() as tx:
        got = await tx.hunks(["h1", "h3", "missing"])
        assert set(got) == {"h1", "h3"} and got["h3"].uri == b and got["h1"].old == ("line 2\n",)
        op, by_id = await tx.op_and_hunks("op-p1", ["h2"])
        assert op is not None and op.lsn == lsn and list(by_id) == ["h2"]
        assert [h.id for h in await tx.hunks_where(uri=a)] == ["h1", "h2"]
        assert [h.id for h in await tx.hunks_where(proposal_id="p1", task_id="t1")] == ["h1", "h2"]
        assert [h.id for h in await tx.hunks_where(statuses=[Status.PENDING, Status.STALE])] == ["h1", "h2", "h3"]
        assert await tx.hunks_where(uri=b, statuses=[Status.APPLIED]) == []
    async with store.write() as tx:
        decided = await tx.log("op-accept", "accept", {"hunkIds": ["h1"]})
        h1.status, h1.lsn, h1.version, h1.in_file = Status.APPLIED, decided, 2, True
        h1.applied_text, h1.feedback, h1.decided_at, h1.problem = ("Line Two\n",), "ok", "2026-01-01T00:00:00.000Z", "p"
        await tx.save_hunks([h1])
        await tx.move_hunks(b, _uri(store, "c.py"), decided, except_id="none")
        await tx.save_lines([(5, "h2")], decided)  # a position moved by the operation
        later = tx.hunks_since_at_commit(lsn)
    assert later.hunks is not None and {h.id for h in later.hunks} == {"h1", "h2", "h3"}  # read with the COMMIT
    assert {h.id: (h.line, h.lsn) for h in later.hunks}["h2"] == (5, decided)  # followed like any change
    (again,) = [h for h in later.hunks if h.id == "h1"]
    assert (again.status, again.in_file, again.applied_text, again.feedback, again.version, again.problem) == (
        Status.APPLIED,
        True,
        ("Line Two\n",),
        "ok",
        2,
        "p",
    )
    async with store.write(derived=True) as tx:
        moved = await tx.log("op-moved", "moved", {"hunkIds": ["h2"]})
        await tx.save_lines([(7, "h2")], moved, unstamp=[a])
    assert [(h.id, h.line) for h in await store.hunks_since(decided)] == [("h2", 7)]
    # A hunk's context, taken again after Stet wrote next to it, is read back from the row even
    # by a process that holds the hunk already (rows read again share the rest of it), and is
    # followed like any change (under the operation that wrote it).
    store.known = {"h2": h2}
    async with store.write() as tx:
        written = await tx.log("op-written", "effect", {"hunkIds": []})
        await tx.save_contexts({"h2": ((None, "x\n"), ("y\n", None))}, written)
    assert [h.id for h in await store.hunks_since(moved)] == ["h2"]
    now = {h.id: h for h in await store.hunks_since(0)}
    assert now["h2"].line == 7 and now["h3"].uri == _uri(store, "c.py") and now["h1"].decided_at is not None
    assert (now["h2"].ctx_before, now["h2"].ctx_after, now["h2"].old) == ((None, "x\n"), ("y\n", None), h2.old)
    store.known = {}
    with pytest.raises(ConstraintError):  # a hunk id is used once
        async with store.write() as tx:
            await tx.add_hunks([_hunk("h1", a)])
    assert len(await store.hunks_since(0)) == 3


async def test_the_effects_journal(store):
    a, b = _uri(store, "a.py"), _uri(store, "b.py")
    await _propose(store, [_hunk("h1", a), _hunk("h2", b)])
    edit = {"hunkId": "h1", "line": 2, "before": "line 2\n", "after": "LINE TWO\n"}
    async with store.write() as tx:
        lsn = await tx.log("op-accept", "accept", {})
        e1 = await tx.add_effect(lsn, a, Action.APPLY, [edit])
        e2 = await tx.add_effect(lsn, b, Action.APPLY, [{**edit, "hunkId": "h2"}], target="buffer", owner="pid-1")
        pending = tx.pending_effect_at_commit(a)
    assert e2 == e1 + 1 and pending.rows and await store.has_pending_effect(a)
    opened = await store.open_effects()
    assert [(e.id, e.uri, e.state, e.target, e.owner, e.edits) for e in opened] == [
        (e1, a, "pending", "file", None, [edit]),
        (e2, b, "pending", "buffer", "pid-1", [{**edit, "hunkId": "h2"}]),
    ]
    async with store.write(derived=True) as tx:
        await tx.set_effect(e1, State.DONE, 1)
        await tx.set_effect(e2, State.UNSAVED, 1, owner="pid-2")
        after = tx.pending_effect_at_commit(a)
    assert after.rows == [] and not await store.has_pending_effect(a)
    assert await store.hunks_done_after(lsn - 1) == {"h1"} and await store.hunks_done_after(lsn) == set()
    (left,) = await store.open_effects()
    assert (left.id, left.state, left.attempts, left.owner) == (e2, "unsaved", 1, "pid-2")
    async with store.write(derived=True) as tx:
        await tx.settle_saved_effects(b)  # the editor saved b: its unsaved edit is in the file
    assert await store.open_effects() == [] and await store.hunks_done_after(0) == {"h1", "h2"}


async def test_file_stamps_stand_until_the_files_hunks_change(store):
    a, b = _uri(store, "a.py"), _uri(store, "b.py")
    assert await store.stamps() == {}
    await store.put_stamps([(a, 10, 1_700_000_000_123_456_789, "hash-a"), (b, 3, 5, None)])
    assert await store.stamps() == {a: (10, 1_700_000_000_123_456_789, "hash-a"), b: (3, 5, None)}
    await _propose(store, [_hunk("h1", a)])  # a changed hunk: a's stamp no longer says when it was judged
    assert await store.stamps() == {b: (3, 5, None)}
    h1 = (await store.hunks_since(0))[0]
    async with store.write(derived=True) as tx:
        h1.in_file = False
        await tx.save_hunks([h1], judged=True)  # what judging the content decided keeps the stamp
        await tx.put_stamps([(a, 11, 6, "hash-a2")])
    assert await store.stamps() == {a: (11, 6, "hash-a2"), b: (3, 5, None)}
    async with store.write(derived=True) as tx:
        await tx.save_lines([(3, "h1")], await tx.log("op-moved", "moved", {"hunkIds": ["h1"]}), unstamp=[b])
    assert await store.stamps() == {a: (11, 6, "hash-a2")}


async def _first_version(store) -> int:
    """The store's data version, once it has one (PostgreSQL: counted from when its LISTEN
    connection is up)."""
    for _ in range(200):
        if (version := await store.data_version()) > 0:
            return version
        await asyncio.sleep(0.05)
    return await store.data_version()


async def test_transactions_roll_back_read_snapshots_and_other_writers_are_seen(engine, store, tmp_path):
    with pytest.raises(RuntimeError):
        async with store.write() as tx:
            await tx.log("op-1", "test", {})
            await tx.op("op-1")  # a hop: the transaction has begun
            raise RuntimeError("boom")
    assert await store.last_lsn() == 0
    async with store.write() as tx:
        await tx.log("op-1", "test", {})
        count = tx.read_at_commit("SELECT COUNT(*) FROM oplog")  # the same text on both engines
    assert count.rows == [(1,)]
    async with store.read() as tx:
        assert await tx.op("op-1") is not None and await tx.op("op-2") is None
    async with store.write():
        pass  # nothing read or written: nothing to commit
    await store.check()
    assert store.lost is None and store.on_lost is None and isinstance(store.known, dict)
    assert store.engine == engine.name and store.path and Path(store.home).name == ".stet"
    assert await store.integrity() == ["ok"]
    other = await _open(engine, tmp_path / "ws")  # another process of the same checkout
    try:
        before = await _first_version(store)
        async with other.write() as tx:
            await tx.log("op-2", "test", {})
        for _ in range(200):  # PostgreSQL: a notification on its way
            if await store.data_version() != before:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("another writer's commit did not change data_version")
        assert await store.last_lsn() == 2
    finally:
        await other.close()


async def test_next_change_wakes_on_another_writers_commit_and_times_out_without(engine, store, tmp_path):
    """What wait_for_decisions waits on (runtime/awaiting.py): the data version once another
    process committed, and the same version after the timeout when nobody did."""
    other = await _open(engine, tmp_path / "ws")  # another process of the same checkout
    try:
        before = await _first_version(store)
        assert await store.next_change(before, 0.3) == before  # nobody wrote: the version as it was
        waiting = asyncio.ensure_future(store.next_change(before, 120))
        await asyncio.sleep(0)  # the wait has begun before the commit
        async with other.write() as tx:
            await tx.log("op-other", "test", {})
        after = await asyncio.wait_for(waiting, 120)  # generous: woken by the commit, long before
        assert after != before and after == await store.data_version()
    finally:
        await other.close()


async def test_stop_thread_lets_a_process_exit_without_closing(engine, tmp_path):
    s = await _open(engine, tmp_path / "ws")
    assert await s.last_lsn() == 0
    s.stop_thread()
    await asyncio.sleep(0.3)  # (the thread answers its last call before the test's loop closes)


async def test_the_task_tables(store):
    async with store.write() as tx:
        lsn = await tx.log("op-t", "task", {})
        made = await tasks.add_task(tx, "t1", "Shout", "capitals", "agent", lsn)
        await tasks.add_task(tx, "t2", "Other", None, None, lsn)
        s1 = await tasks.put_step(tx, "t1", None, "read a.py", "done", lsn)
        s2 = await tasks.put_step(tx, "t1", None, "edit a.py", "pending", lsn)
        await tasks.put_step(tx, "t1", 2, "edit a.py twice", "in_progress", lsn)
        q = await tasks.add_note(tx, "t1", "question", "which line?", None, None, lsn)
        await tasks.add_note(tx, "t1", "answer", "line 2", "seen", q.n, lsn)
        await tasks.put_file(tx, "t1", _uri(store, "a.py"), "h1", lsn)
        await tasks.put_file(tx, "t1", _uri(store, "a.py"), "h2", lsn)  # read again: replaced
        await tasks.touch(tx, "t2", lsn)
        await tasks.touch(tx, "t1", lsn, status="done", summary="all caps")
    assert (made.status, s1.n, s2.n) == ("open", 1, 2)
    async with store.read() as tx:
        t1 = await tasks.task(tx, "t1")
        assert t1 is not None and (t1.status, t1.summary, t1.goal, t1.agent) == (
            "done",
            "all caps",
            "capitals",
            "agent",
        )
        assert await tasks.task(tx, "nope") is None
        assert [t.id for t in await tasks.tasks(tx)] == ["t1", "t2"]
        assert [t.id for t in await tasks.tasks(tx, "open")] == ["t2"]
        assert [(s.n, s.text, s.status) for s in await tasks.steps(tx, "t1")] == [
            (1, "read a.py", "done"),
            (2, "edit a.py twice", "in_progress"),
        ]
        assert [(n.n, n.kind, n.answers, n.why) for n in await tasks.notes(tx, "t1")] == [
            (1, "question", None, None),
            (2, "answer", 1, "seen"),
        ]
        assert [(f.uri, f.hash) for f in await tasks.files(tx, "t1")] == [(_uri(store, "a.py"), "h2")]


async def test_the_snapshot_and_capture_tables(store):
    a, b, c = _uri(store, "a.py"), _uri(store, "b.py"), _uri(store, "sub/c.py")
    restores = [{"uri": a, "expect": "x", "text": "y"}]
    async with store.write() as tx:
        lsn = await tx.log("op-s", "snapshot", {})
        await captures.start_set(tx, "t1", True, lsn)
        await captures.add_entries(tx, "t1", [(a, "ha"), (b, None)], lsn)
        await captures.add_entries(tx, "t1", [(a, "later"), (c, "hc")], lsn)  # a keeps its first content
        await captures.set_agent_hash(tx, "t1", b, "agent-b", lsn)
        await captures.add_capture(tx, "cap1", lsn, restores, {"worktree": "/w", "repo": "/r"})
        await captures.add_capture(tx, "cap2", lsn, [], None)  # nothing to do: done at once
    async with store.read() as tx:
        got = await captures.snapshot_set(tx, "t1")
        assert got is not None and got.whole and got.consumed == [] and got.lsn == lsn
        assert got.entries == {a: ("ha", None), b: (None, "agent-b"), c: ("hc", None)}
        assert await captures.snapshot_sets(tx) == [("t1", True, 3)]
        assert await captures.referenced(tx) == {"ha", "agent-b", "hc"}
        assert await captures.snapshot_set(tx, "nope") is None
        (open_,) = await captures.open_captures(tx)
        assert (open_.id, open_.state, open_.restores, open_.cleanup) == (
            "cap1",
            "pending",
            restores,
            {"worktree": "/w", "repo": "/r"},
        )
        done = await captures.capture(tx, "cap2")
        assert done is not None and done.state == "done" and await captures.capture(tx, "nope") is None
    async with store.write() as tx:
        await captures.consume(tx, "t1", [a], ["sub/"])
        await captures.finish_capture(tx, "cap1", {"restored": [a]})
        await captures.reopen_capture(tx, "cap2", lsn, restores, None)
    async with store.read() as tx:
        left = await captures.snapshot_set(tx, "t1")
        assert left is not None and left.consumed == ["sub/"] and set(left.entries) == {b, c}
        finished = await captures.capture(tx, "cap1")
        assert finished is not None and (finished.state, finished.outcome) == ("done", {"restored": [a]})
        assert [x.id for x in await captures.open_captures(tx)] == ["cap2"]
    async with store.write() as tx:
        await captures.consume(tx, "t1", [b, c], [""])  # everything used: the set is dropped
        await captures.start_set(tx, "t2", False, lsn)
        await captures.drop_set(tx, "t2")
    async with store.read() as tx:
        assert await captures.snapshot_sets(tx) == [] and await captures.referenced(tx) == set()


async def test_two_checkouts_of_one_review_never_see_each_others_own_rows(engine, tmp_path):
    """PostgreSQL: the review (hunks, decisions, tasks) is shared; each checkout's effects
    journal, file stamps and inFile are its own, whatever the other writes."""
    if not engine.pg:
        pytest.skip("one checkout per SQLite store")
    dev, agent = await _open(engine, tmp_path / "dev"), await _open(engine, tmp_path / "agent")
    try:
        await _propose(dev, [_hunk("h1", _uri(dev, "a.py"))])
        (seen,) = await agent.hunks_since(0)
        assert seen.uri == _uri(agent, "a.py")  # the review is shared, at each checkout's paths
        edit = {"hunkId": "h1", "line": 2, "before": "line 2\n", "after": "LINE TWO\n"}
        async with dev.write() as tx:
            lsn = await tx.log("op-accept", "accept", {})
            mine = await tx.add_effect(lsn, _uri(dev, "a.py"), Action.APPLY, [edit], target="buffer", owner="dev")
            await tx.set_effect(mine, State.UNSAVED, 1)
            h1 = (await tx.hunks(["h1"]))["h1"]
            h1.status, h1.in_file = Status.APPLIED, True
            await tx.save_hunks([h1], judged=True)
            await tx.put_stamps([(_uri(dev, "a.py"), 1, 2, "dev")])
        assert [e.id for e in await dev.open_effects()] == [mine] and await agent.open_effects() == []
        assert not await agent.has_pending_effect(_uri(agent, "a.py"))
        async with agent.write(derived=True) as tx:
            await tx.settle_saved_effects(_uri(agent, "a.py"))  # the agent's save settles nothing of dev's
            await tx.set_effect(mine, State.DONE, 9)  # nor can it finish dev's effect by its id
            await tx.put_stamps([(_uri(agent, "a.py"), 7, 8, "agent")])
            theirs = tx.pending_effect_at_commit(_uri(agent, "a.py"))
        assert theirs.rows == []
        (still,) = await dev.open_effects()
        assert (still.state, still.attempts) == ("unsaved", 1) and await agent.hunks_done_after(0) == set()
        assert await dev.stamps() == {_uri(dev, "a.py"): (1, 2, "dev")}
        assert await agent.stamps() == {_uri(agent, "a.py"): (7, 8, "agent")}
        by_dev, by_agent = (await dev.hunks_since(0))[0], (await agent.hunks_since(0))[0]
        assert by_dev.status == by_agent.status == Status.APPLIED
        assert (by_dev.in_file, by_agent.in_file) == (True, None)  # in dev's file; the agent's never judged
        async with agent.read() as tx:
            assert [h.in_file for h in await tx.hunks_where(uri=_uri(agent, "a.py"))] == [None]
            assert (await tx.hunks(["h1"]))["h1"].in_file is None
    finally:
        await dev.close()
        await agent.close()


def _stored_texts(engine, store: StoreApi) -> list[tuple[str, str, str]]:
    """(table, column, value) of every text the store holds, as it holds it."""
    out = []
    if engine.pg:
        import psycopg

        with psycopg.connect(engine.db(Path(store.home).parent)) as conn:
            columns = conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND data_type = 'text'"
            ).fetchall()
            for table, column in columns:
                for (value,) in conn.execute(f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL'):
                    out.append((table, column, value))
        return out
    import sqlite3

    conn = sqlite3.connect(store.path)
    try:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            names = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            for column in names:
                for (value,) in conn.execute(f'SELECT "{column}" FROM "{table}"'):
                    if isinstance(value, str):
                        out.append((table, column, value))
    finally:
        conn.close()
    return out


async def _every_kind_of_path(store: StoreApi) -> None:
    """Something in every place the store keeps a path (statements.PATHS)."""
    a, b, c = _uri(store, "a.py"), _uri(store, "b.py"), _uri(store, "sub/c.py")
    hunk = _hunk("h1", a)
    hunk.new_uri = b
    await _propose(store, [hunk, _hunk("h2", c, seq=1)])
    # ("after": a text holding a uri inside it, not a path: kept exactly as written)
    edit = {"hunkId": "h1", "uri": a, "newUri": b, "before": a + "\n", "after": '"' + a}
    async with store.write() as tx:
        lsn = await tx.log("op-x", "accept", {"files": [a], "edit": {a: [c]}}, {"uri": b})
        await tx.add_effect(lsn, a, Action.APPLY, [edit])
        await tx.put_stamps([(c, 1, 2, "h")])
        await tasks.add_task(tx, "t1", "T", None, None, lsn)
        await tasks.put_file(tx, "t1", a, "h", lsn)
        await captures.start_set(tx, "t1", True, lsn)
        await captures.add_entries(tx, "t1", [(a, "ha"), (c, None)], lsn)
        await captures.add_capture(tx, "cap1", lsn, [{"uri": a, "expect": "x", "text": "y"}], {"repo": a})
        await captures.add_capture(tx, "cap2", lsn, [{"uri": c, "expect": "x", "text": "y"}], None)
        await captures.finish_capture(tx, "cap2", {"restored": [c]})


async def _read_every_kind_of_path(store: StoreApi, written_at: StoreApi) -> None:
    """What _every_kind_of_path stored (in `written_at`), read at this store's root."""
    a, b, c = _uri(store, "a.py"), _uri(store, "b.py"), _uri(store, "sub/c.py")
    by_id = {h.id: h for h in await store.hunks_since(0)}
    assert (by_id["h1"].uri, by_id["h1"].new_uri, by_id["h2"].uri) == (a, b, c)
    assert by_id["h1"].old == ("line 2\n",)  # a hunk's text: as it is
    op = await store.op("op-x")
    assert op is not None and op.args == {"files": [a], "edit": {a: [c]}} and op.result == {"uri": b}
    (effect,) = await store.open_effects()
    assert effect.uri == a and effect.edits == [
        {"hunkId": "h1", "uri": a, "newUri": b, "before": a + "\n", "after": '"' + _uri(written_at, "a.py")}
    ]
    assert await store.has_pending_effect(a) and set(await store.stamps()) == {c}
    async with store.read() as tx:
        assert [h.id for h in await tx.hunks_where(uri=c)] == ["h2"]
        assert [f.uri for f in await tasks.files(tx, "t1")] == [a]
        got = await captures.snapshot_set(tx, "t1")
        assert got is not None and set(got.entries) == {a, c}
        cap1, cap2 = await captures.capture(tx, "cap1"), await captures.capture(tx, "cap2")
        assert cap1 is not None and cap1.restores == [{"uri": a, "expect": "x", "text": "y"}]
        assert cap1.cleanup == {"repo": a} and cap2 is not None and cap2.outcome == {"restored": [c]}


async def test_every_path_is_stored_relative_and_read_at_the_readers_root(engine, tmp_path):
    """A store moved with its folder (SQLite), or another checkout of the review (PostgreSQL),
    reads every path at its own root; none is stored absolute."""
    first = await _open(engine, tmp_path / "ws")
    try:
        await _every_kind_of_path(first)
        await _read_every_kind_of_path(first, first)
        root = Path(first.home).parent
        texts = [(t, c, v.replace('\\"' + _uri(first, ""), "")) for t, c, v in _stored_texts(engine, first)]
        # (PostgreSQL: a checkout is named by its host and folder - "host:root" - on its own rows)
        held = [
            (t, c, v) for t, c, v in texts if t != "roots" and str(root) in v and c not in ("id", "root", "checkout")
        ]
        if engine.pg:
            assert {t for t, c, v in texts if c in ("id", "root", "checkout") and str(root) in v} == {
                "stet_checkouts",
                "effects",
                "file_stamps",
            }
        assert held == [], held
        assert any(v == "stet-repo:///sub/c.py" for _, c, v in _stored_texts(engine, first) if c == "uri")
    finally:
        await first.close()
    if not engine.pg:
        (tmp_path / "ws").rename(tmp_path / "moved")
    other = await _open(engine, tmp_path / "moved")
    try:
        if engine.pg:  # the other checkout's own rows: its effects and stamps start empty
            assert await other.open_effects() == [] and await other.stamps() == {}
            async with other.write(derived=True) as tx:
                await tx.add_effect(1, _uri(other, "a.py"), Action.APPLY, [])
            (effect,) = await other.open_effects()
            assert effect.uri == _uri(other, "a.py")
            by_id = {h.id: h for h in await other.hunks_since(0)}
            assert by_id["h1"].uri == _uri(other, "a.py") and by_id["h2"].uri == _uri(other, "sub/c.py")
        else:
            await _read_every_kind_of_path(other, first)
    finally:
        await other.close()


async def test_a_root_added_later_is_stored_by_its_index(engine, tmp_path):
    store = await _open(engine, tmp_path / "ws")
    try:
        lib = (tmp_path / "lib").as_uri()
        await store.add_roots([_uri(store, ""), lib])  # the first root again: nothing new
        await store.add_roots([lib])  # again: nothing new either
        await _propose(store, [_hunk("h1", lib + "/x.py")])
        assert [h.uri for h in await store.hunks_since(0)] == [lib + "/x.py"]
        assert ("hunks", "uri", "stet-root:1/x.py") in _stored_texts(engine, store)
    finally:
        await store.close()
    # A process opened without that folder reads its paths where the store last saw them.
    again = await _open(engine, tmp_path / "ws")
    try:
        assert [h.uri for h in await again.hunks_since(0)] == [lib + "/x.py"]
    finally:
        await again.close()


def test_every_public_method_of_the_store_interface_is_run_here():
    """The suite above calls each of them (a new method of the interface gets its case here)."""
    source = Path(__file__).read_text()
    names = {n for n in dir(StoreApi) if not n.startswith("_")}
    names |= {n for n, v in vars(Tx).items() if not n.startswith("_") and inspect.isfunction(v)}
    for module in (tasks, captures):
        names |= {
            f"{module.__name__.rsplit('.', 1)[1]}.{n}"
            for n, v in vars(module).items()
            if inspect.iscoroutinefunction(v) and not n.startswith("_")
        }
    missing = sorted(n for n in names if f".{n}" not in source and f"{n}(" not in source and f".{n} " not in source)
    assert not missing, missing


async def test_a_split_hunk_keeps_its_parts(store):
    """A hunk split into a part and the rest (docs/protocol.md, "Parts of a hunk"): the new hunks
    are added and the original names them, read back as it was written."""
    a = _uri(store, "a.py")
    h1 = _hunk("h1", a)
    await _propose(store, [h1])
    part, rest = _hunk("h1a", a, seq=0), _hunk("h1b", a, seq=0)
    async with store.write() as tx:
        split = await tx.log("op-split", "accept", {"hunkIds": ["h1a"], "split": {"hunkId": "h1", "restId": "h1b"}})
        h1.move_to(Status.SUPERSEDED, "split")
        h1.lsn = part.lsn = rest.lsn = split
        await tx.add_hunks([part, rest])
        await tx.save_hunks([h1])
        await tx.set_parts("h1", ("h1a", "h1b"))
    now = {h.id: h for h in await store.hunks_since(0)}
    assert now["h1"].status == Status.SUPERSEDED and now["h1"].parts == ("h1a", "h1b")
    assert hunk_json.state(now["h1"])["parts"] == ["h1a", "h1b"]
    assert now["h1a"].parts is None and "parts" not in hunk_json.state(now["h1a"])


async def test_a_hunk_names_its_agent_and_a_rejection_sent_back_is_followed(store):
    """A hunk's agent is its proposal's, else its task's (not stored with the hunk); a rejection
    sent back to the agent is stored on the hunk under an operation, so a follower reads it."""
    a = _uri(store, "a.py")
    await _propose(store, [_hunk("h1", a)])  # (its proposal names the agent "agent")
    async with store.write() as tx:
        await tasks.add_task(tx, "t2", "Shout", None, "gemini", await tx.log("op-t2", "task.start", {}))
        lsn = await tx.log("op-p2", "propose", {"id": "p2"})
        await tx.add_proposal("p2", "t2", None, None, "edit2#", "result2#", lsn)
        h2 = _hunk("h2", a, proposal="p2", task="t2", line=8)
        h2.lsn = lsn
        await tx.add_hunks([h2])
    now = {h.id: h for h in await store.hunks_since(0)}
    assert (now["h1"].agent, now["h2"].agent, now["h1"].sent_back) == ("agent", "gemini", None)
    seen = await store.last_lsn()
    async with store.write() as tx:
        await loop.put_sent_back(tx, [("h1", "rejected 2026-01-01")], await tx.log("op-sent", "sentBack", {}))
    (h1,) = await store.hunks_since(seen)
    assert (h1.id, h1.sent_back, h1.agent) == ("h1", "rejected 2026-01-01", "agent")
