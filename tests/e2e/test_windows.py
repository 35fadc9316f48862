"""Two editor windows on one folder: an edit living in one window's unsaved buffer is that
window's to settle; another server writes it to disk only once its owner is gone."""

import asyncio

from support.harness import Session, read, rng, until

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))


async def test_another_window_does_not_write_an_unsaved_buffer_edit(ws):
    a_window = Session(ws)
    await a_window.start()
    a = a_window.open(ws / "a.py")
    (h,) = (await a_window.propose("p", {a: [(rng(1, 0, 2, 0), "TWO\n")]}))["hunks"]
    res = await a_window.command("stet.accept", {"hunkIds": [h["id"]]})
    assert res["hunks"][0]["status"] == "applied" and "TWO" in a_window.text(a)
    b_window = Session(ws)
    await b_window.start()
    await asyncio.sleep(1.2)  # past the start-up settle delay of window B's server
    assert read(ws / "a.py") == A_TEXT  # still only in window A's buffer
    await b_window.stop()
    await a_window.kill()  # window A's server dies, and its editor with its buffer
    c_window = Session(ws)
    await c_window.start()
    try:
        await until(lambda: "TWO" in read(ws / "a.py"), "the buffer's edit settled on disk")
        assert read(ws / "a.py") == A_TEXT.replace("line 2\n", "TWO\n")  # settled once its owner was gone
    finally:
        await c_window.stop()
