from support.harness import Session, read, rng, uri


async def test_propose_accept_reject_restart(ws, session):
    a = uri(ws / "a.py")
    res = await session.propose("p1", {a: [(rng(1, 0, 2, 0), "LINE TWO\n"), (rng(7, 0, 8, 0), "")]})
    hunks = res["hunks"]
    assert [h["status"] for h in hunks] == ["pending", "pending"]
    assert hunks[0]["oldText"] == "line 2\n" and hunks[0]["newText"] == "LINE TWO\n"
    assert hunks[0]["range"] == rng(1, 0, 2, 0)
    out = await session.command("stet.accept", {"hunkIds": [hunks[0]["id"]]})
    assert out["hunks"][0]["status"] == "applied"
    assert read(ws / "a.py").splitlines()[1] == "LINE TWO"
    out = await session.command("stet.reject", {"hunkIds": [hunks[1]["id"]], "feedback": "keep it"})
    assert out["hunks"][0]["status"] == "rejected"
    before = await session.hunks()
    await session.kill()
    s2 = Session(ws)
    restored = await s2.start()
    assert restored["counts"]["applied"] == 1 and restored["counts"]["rejected"] == 1
    after = await s2.hunks()
    assert after == before
    assert read(ws / "a.py").count("LINE TWO") == 1
    await s2.stop()
