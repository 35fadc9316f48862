"""Accept with changes: the developer's `text` is what lands in the file, not the proposal's."""

from support.harness import read, rng, uri


async def test_accept_text_writes_the_developers_text_to_disk(ws, session):
    a = uri(ws / "a.py")
    res = await session.propose("p1", {a: [(rng(1, 0, 2, 0), "PROPOSED\n")]})
    hid = res["hunks"][0]["id"]
    out = await session.command("stet.accept", {"hunkIds": [hid], "text": "MINE\n"})
    assert out["hunks"][0]["status"] == "applied"
    lines = read(ws / "a.py").splitlines()
    assert lines[1] == "MINE" and "PROPOSED" not in lines


async def test_accept_text_edits_the_open_buffer_with_the_developers_text(ws, session):
    u = session.open(ws / "a.py")
    res = await session.propose("p1", {u: [(rng(4, 0, 5, 0), "PROPOSED\n")]})
    hid = res["hunks"][0]["id"]
    out = await session.command("stet.accept", {"hunkIds": [hid], "text": "MINE\nAND MORE\n"})
    assert out["hunks"][0]["status"] == "applied"
    text = session.text(u)
    assert "MINE\nAND MORE\n" in text and "PROPOSED" not in text
