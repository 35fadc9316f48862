"""Crash tests: the real server is killed with SIGKILL (by us, or by itself at a named fault
point) and a new one must find the same review, each accepted hunk in its file exactly once."""

import sqlite3

import pytest

from stet.workspace.safe import temp_name
from support.harness import ServerDied, Session, effects_left, read, rng, until, uri

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))
NEW = "LINE TWO\n"


async def propose(s, ws, pid="p1"):
    a = uri(ws / "a.py")
    res = await s.propose(pid, {a: [(rng(1, 0, 2, 0), NEW), (rng(5, 0, 6, 0), "line 6a\nline 6b\n")]})
    return [h["id"] for h in res["hunks"]]


def integrity(ws) -> str:
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


async def restart(ws, old: Session | None = None, **kw) -> tuple[Session, dict]:
    s = Session(ws, **kw)
    if old is not None:
        s.docs = old.docs  # the editor is still there, with its buffers
    restored = await s.start()
    return s, restored


async def test_kill_after_acknowledged_accept_file(ws, session):
    h1, h2 = await propose(session, ws)
    await session.command("stet.accept", {"hunkIds": [h1]})
    await session.command("stet.reject", {"hunkIds": [h2], "feedback": "no"})
    before = await session.hunks()
    await session.kill()
    s2, restored = await restart(ws)
    try:
        assert await s2.hunks() == before
        assert restored["counts"]["applied"] == 1 and restored["counts"]["rejected"] == 1
        assert read(ws / "a.py").count(NEW) == 1
        assert integrity(ws) == "ok"
    finally:
        await s2.stop()


async def test_kill_after_acknowledged_accept_in_buffer(ws, session):
    a = session.open(ws / "a.py")
    h1, _ = await propose(session, ws)
    await session.command("stet.accept", {"hunkIds": [h1]})
    before = await session.hunks()
    await session.kill()
    s2, _ = await restart(ws, session)  # the editor re-opens its (unsaved) buffer
    try:
        assert await s2.hunks() == before
        assert s2.text(a).count(NEW) == 1
        assert s2.apply_requests == 0  # nothing to redo: the buffer has it
    finally:
        await s2.stop()


@pytest.mark.parametrize(
    "point",
    [
        "decide:after-commit",
        "effect:before-write",
        "effect:after-write",
        "effect:before-confirm",
        "effect:after-confirm",
    ],
)
async def test_fault_between_decision_and_effect_on_file(ws, point):
    s = Session(ws, env={"STET_FAULT": point})
    await s.start()
    h1, h2 = await propose(s, ws)
    with pytest.raises(ServerDied):
        await s.command("stet.accept", {"hunkIds": [h1, h2]})
    await s.died()
    s2, restored = await restart(ws)
    try:
        states = {h["id"]: h["status"] for h in await s2.hunks()}
        assert states == {h1: "applied", h2: "applied"}, point
        text = read(ws / "a.py")
        assert text.count(NEW) == 1 and text.count("line 6a\n") == 1 and "line 2\n" not in text
        # A second restart changes nothing: recovery is idempotent.
        await s2.stop()
        s3, _ = await restart(ws)
        assert read(ws / "a.py") == text
        assert {h["id"]: h["status"] for h in await s3.hunks()} == states
        await s3.stop()
        assert integrity(ws) == "ok"
    finally:
        if s2.client._server.returncode is None:
            await s2.stop()


@pytest.mark.parametrize(
    "point", ["decide:after-commit", "effect:before-write", "effect:after-write", "effect:before-confirm"]
)
async def test_fault_between_decision_and_effect_in_buffer(ws, point):
    s = Session(ws, env={"STET_FAULT": point})
    await s.start()
    a = s.open(ws / "a.py")
    h1, _ = await propose(s, ws)
    with pytest.raises(ServerDied):
        await s.command("stet.accept", {"hunkIds": [h1]})
    await s.died()
    s2, _ = await restart(ws, s)
    try:
        await s2.hunks_until(lambda hs: {h["id"]: h["status"] for h in hs}[h1] == "applied", f"{h1} applied ({point})")
        assert s2.text(a).count(NEW) == 1 and "line 2\n" not in s2.text(a)
    finally:
        await s2.stop()


async def test_kill_during_recovery_then_recover_again(ws):
    s = Session(ws, env={"STET_FAULT": "decide:after-commit"})
    await s.start()
    h1, h2 = await propose(s, ws)
    with pytest.raises(ServerDied):
        await s.command("stet.accept", {"hunkIds": [h1, h2]})
    await s.died()
    for point in ("recover:start", "recover:after-effect", "recover:after-relocate"):
        dying = Session(ws, env={"STET_FAULT": point})
        await dying.start(wait_restored=False)
        await dying.died()
    s2, _ = await restart(ws)
    try:
        assert {h["status"] for h in await s2.hunks()} == {"applied"}
        text = read(ws / "a.py")
        assert text.count(NEW) == 1 and text.count("line 6a\n") == 1
    finally:
        await s2.stop()


async def test_unacknowledged_proposal_is_kept_and_replay_adds_nothing(ws):
    s = Session(ws, env={"STET_FAULT": "propose:after-commit"})
    await s.start()
    with pytest.raises(ServerDied):
        await propose(s, ws)
    await s.died()
    s2, restored = await restart(ws)
    try:
        assert restored["counts"]["pending"] == 2
        ids = await propose(s2, ws)  # the agent retries the same proposal
        assert sorted(ids) == sorted(h["id"] for h in await s2.hunks())
    finally:
        await s2.stop()


async def test_applied_edit_lost_with_the_unsaved_buffer_is_reapplied(ws, session):
    session.open(ws / "a.py")
    h1, _ = await propose(session, ws)
    res = await session.command("stet.accept", {"hunkIds": [h1]})
    assert res["hunks"][0]["status"] == "applied"
    assert read(ws / "a.py") == A_TEXT  # only in the buffer
    await session.kill()  # ... and the editor crashed too: its buffer is gone
    s2, _ = await restart(ws)
    try:
        # Settled shortly after start, once no editor claimed the buffer.
        await until(lambda: NEW in read(ws / "a.py"), "the lost buffer's edit re-applied to the file")
        assert read(ws / "a.py").count(NEW) == 1
        assert {h["id"]: h["status"] for h in await s2.hunks()}[h1] == "applied"
    finally:
        await s2.stop()


async def test_saved_buffer_settles_and_nothing_is_rewritten(ws, session):
    session.open(ws / "a.py")
    h1, _ = await propose(session, ws)
    await session.command("stet.accept", {"hunkIds": [h1]})
    session.save(ws / "a.py")
    await until(lambda: effects_left(ws, "unsaved") == 0, "the save recorded (the edit is on disk: its effect done)")
    # The developer later changes the applied line on disk and saves: their text stays.
    text = read(ws / "a.py").replace(NEW, "line 2\n")
    with open(ws / "a.py", "w") as f:
        f.write(text)
    await session.kill()
    s2, _ = await restart(ws)
    try:
        assert read(ws / "a.py") == text
    finally:
        await s2.stop()


def _mistagged(name: str) -> str:
    """A temp name whose checksum is wrong: what a person might type, not what Stet makes."""
    return name[:-1] + ("1" if name.endswith("0") else "0")


async def test_leftover_temp_files_are_removed_at_start(ws, session):
    h1, _ = await propose(session, ws)
    await session.kill()
    leftover = ws / temp_name("a.py")  # as an interrupted write leaves it
    leftover.write_text("half-written")
    # A developer's own files that merely look alike are theirs: never swept away.
    look_alikes = [ws / ".draft.stet-tmp-notes", ws / ".a.py.stet-tmp-deadbeef", ws / _mistagged(temp_name("a.py"))]
    for p in look_alikes:
        p.write_text("mine")
    s2, _ = await restart(ws)
    try:
        assert not leftover.exists()
        assert all(p.read_text() == "mine" for p in look_alikes)
    finally:
        await s2.stop()
