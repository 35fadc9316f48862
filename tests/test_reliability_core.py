"""Regression tests for core bugs the crash torture found (tests/torture.py), one per bug,
each through the real server process."""

import asyncio

from lsprotocol import types

from harness import ServerDied, Session, read, rng, uri, write


async def statuses(s: Session) -> dict[str, str]:
    return {h["id"]: h["status"] for h in await s.hunks()}


async def test_buffer_decides_over_disk_when_the_editor_reopens_during_recovery(ws):
    """A hunk made stale by typing in an unsaved buffer stays stale after a crash when the
    editor re-opens that buffer, even though the file on disk still has the old text.

    Recovery re-locates the hunks of files no editor has open against the disk; when the
    editor's didOpen arrived while it was reading, the disk's verdict (stale -> pending) was
    written after the buffer had been checked, and nothing checked the buffer again. The
    restarts below send didOpen at instants spread over recovery."""
    others = [write(ws / f"o{i}.txt", f"x{i}\ny{i}\n") for i in range(120)]
    b = ws / "b.txt"
    s = Session(ws)
    await s.start()
    u = s.open(b)
    hid = (await s.propose("p1", {u: [(rng(1, 0, 2, 0), "BETA\n")]}))["hunks"][0]["id"]
    await s.propose("p2", {uri(p): [(rng(0, 0, 1, 0), "X\n")] for p in others})
    s.type(u, rng(1, 0, 1, 4), "bet")  # the developer changes the hunk's old text, unsaved
    for _ in range(30):
        if (await statuses(s))[hid] == "stale":
            break
        await asyncio.sleep(0.1)
    assert (await statuses(s))[hid] == "stale"
    assert "beta\n" in read(b)  # the disk still has the old text
    await s.kill()
    wrong = []
    for delay in [i * 0.02 for i in range(8)]:
        s2 = Session(ws)
        await s2.start(wait_restored=False)
        await asyncio.sleep(delay)
        s2.docs = s.docs
        s2.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(u, "text", s.docs[u][1], s.docs[u][0])))
        await asyncio.wait_for(s2.restored, 30)
        await asyncio.sleep(0.3)
        status = (await statuses(s2))[hid]
        await s2.kill()
        if status != "stale":
            wrong.append((delay, status))
    assert not wrong, f"didOpen after (seconds, status): {wrong}"


async def test_undo_interrupted_before_its_revert_reaches_the_reopened_buffer(ws):
    """Undo of an applied hunk commits, then the server dies before reverting the editor's
    buffer. At restart the editor re-opens the buffer, still showing the new text: the hunk
    must end `pending` with its old text back, not `stale`.

    Opening the buffer judged the pending hunk by content while its revert was still
    journaled and not yet run: old text absent, so stale; the revert then put the old text
    back but left the hunk stale."""
    s = Session(ws)
    await s.start()
    a = s.open(ws / "a.py")
    hid = (await s.propose("p1", {a: [(rng(1, 0, 2, 0), "LINE TWO\n")]}))["hunks"][0]["id"]
    assert (await s.command("stet.accept", {"hunkIds": [hid]}))["hunks"][0]["status"] == "applied"
    await s.stop()
    s1 = Session(ws, env={"STET_FAULT": "decide:after-commit"})
    s1.docs = s.docs
    await s1.start()
    try:
        await s1.command("stet.undo", {"hunkIds": [hid]})
        raise AssertionError("the fault point did not fire")
    except ServerDied:
        await s1.died()
    assert "LINE TWO\n" in s1.text(a)  # the revert never reached the buffer
    s2 = Session(ws)
    s2.docs = s1.docs
    await s2.start()
    try:
        for _ in range(40):
            if (await statuses(s2))[hid] == "pending" and "line 2\n" in s2.text(a):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        assert (await statuses(s2))[hid] == "pending"
        assert s2.text(a).count("line 2\n") == 1 and "LINE TWO" not in s2.text(a)
    finally:
        await s2.stop()
