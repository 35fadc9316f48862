"""Files changed outside the editor: hunks follow their text, or say they no longer fit.

How soon a change is seen (the contract: within a second) is recorded in the run's figures; the
tests wait for what they check with generous deadlines, as a busy machine may take longer."""

import asyncio
import time

from support.figures import FIGURES
from support.harness import Session, read, rng, uri, write

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))


async def ranges_and_states(s):
    return {h["id"]: (h["range"]["start"]["line"], h["status"]) for h in await s.hunks()}


async def wait_for(s, predicate, timeout=30.0):
    """Poll the server's view until `predicate` holds; returns the seconds it took."""
    start = time.monotonic()
    while True:
        view = await ranges_and_states(s)
        if predicate(view):
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout}s: {view}")
        await asyncio.sleep(0.02)


async def written_until_seen(s, path, text: str, predicate, timeout: float = 60.0) -> None:
    """Write `text` to `path` (again each second as long as the server has not seen it: its
    watch may not be set up yet) until `predicate` holds."""
    deadline = time.monotonic() + timeout
    while True:
        write(path, text)
        try:
            await wait_for(s, predicate, timeout=1.0)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise


async def test_editor_reported_change_reanchors_within_a_second(ws, session):
    assert any(r.method == "workspace/didChangeWatchedFiles" for r in session.registrations)
    a = uri(ws / "a.py")
    h1, h2 = (
        h["id"]
        for h in (await session.propose("p", {a: [(rng(1, 0, 2, 0), "TWO\n"), (rng(5, 0, 6, 0), "SIX\n")]}))["hunks"]
    )
    write(ws / "a.py", "inserted 1\ninserted 2\n" + A_TEXT.replace("line 6\n", "line six, mine\n"))
    session.changed.clear()
    session.files_changed(ws / "a.py")
    took = await wait_for(session, lambda v: v[h1] == (3, "pending") and v[h2][1] == "stale")
    FIGURES["outside change reported by the editor, seen after"] = f"{took * 1000:.0f} ms"
    assert any(c["uri"] == a for c in session.changed)
    # Accepting the moved hunk lands at its new place; the stale one is refused.
    await session.command("stet.accept", {"hunkIds": [h1]})
    assert read(ws / "a.py").splitlines()[3] == "TWO"


async def test_restart_after_outside_change_gives_the_same_result_as_live(ws, tmp_path):
    a = uri(ws / "a.py")
    s = Session(ws)
    await s.start()
    ids = [
        h["id"] for h in (await s.propose("p", {a: [(rng(1, 0, 2, 0), "TWO\n"), (rng(5, 0, 6, 0), "SIX\n")]}))["hunks"]
    ]
    await s.kill()
    changed = "top\n" + A_TEXT.replace("line 6\n", "line 6 edited\n")
    write(ws / "a.py", changed)
    s2 = Session(ws)
    await s2.start()
    after_restart = await ranges_and_states(s2)
    await s2.stop()
    # The same change seen live by a running server.
    live_ws = tmp_path / "live"
    live_ws.mkdir()
    write(live_ws / "a.py", A_TEXT)
    s3 = Session(live_ws)
    await s3.start()
    try:
        la = uri(live_ws / "a.py")
        live_ids = [
            h["id"]
            for h in (await s3.propose("p", {la: [(rng(1, 0, 2, 0), "TWO\n"), (rng(5, 0, 6, 0), "SIX\n")]}))["hunks"]
        ]
        write(live_ws / "a.py", changed)
        s3.files_changed(live_ws / "a.py")
        await wait_for(s3, lambda v: v[live_ids[1]][1] == "stale")
        live = await ranges_and_states(s3)
        assert [after_restart[i] for i in ids] == [live[i] for i in live_ids] == [(2, "pending"), (6, "stale")]
    finally:
        await s3.stop()


async def test_found_again_after_the_change_is_undone(ws, session):
    a = uri(ws / "a.py")
    (h,) = (await session.propose("p", {a: [(rng(4, 0, 5, 0), "FIVE\n")]}))["hunks"]
    write(ws / "a.py", A_TEXT.replace("line 5\n", "line 5?\n"))
    session.files_changed(ws / "a.py")
    await wait_for(session, lambda v: v[h["id"]][1] == "stale")
    write(ws / "a.py", A_TEXT)
    session.files_changed(ws / "a.py")
    await wait_for(session, lambda v: v[h["id"]] == (4, "pending"))


async def test_open_buffer_wins_over_the_disk(ws, session):
    a = session.open(ws / "a.py")
    (h,) = (await session.propose("p", {a: [(rng(4, 0, 5, 0), "FIVE\n")]}))["hunks"]
    write(ws / "a.py", "x\n")  # the disk changes under an open buffer: the buffer is the truth
    session.files_changed(ws / "a.py")
    await asyncio.sleep(0.5)
    assert (await ranges_and_states(session))[h["id"]] == (4, "pending")


async def test_watchdog_sees_changes_on_disk_without_the_editor(ws, tmp_path):
    """No editor reports anything here: the server's own watcher sees the file change."""
    s = Session(ws, capabilities="neovim@v0.7.0")  # a client without workspace/didChangeWatchedFiles
    await s.start()
    try:
        a = uri(ws / "a.py")
        (h,) = (await s.propose("p", {a: [(rng(4, 0, 5, 0), "FIVE\n")]}))["hunks"]
        # The watch on the folder is set up within a rescan: written until the change is seen.
        await written_until_seen(s, ws / "a.py", "new top\n" + A_TEXT, lambda v: v[h["id"]] == (5, "pending"))
        # An editor's atomic save: write a temp file, rename it over the real one.
        tmp = ws / ".a.py.swp~"
        write(tmp, A_TEXT.replace("line 5\n", "changed five\n"))
        tmp.replace(ws / "a.py")
        took = await wait_for(s, lambda v: v[h["id"]][1] == "stale")
        FIGURES["outside change seen by the server's own watcher after"] = f"{took * 1000:.0f} ms"
    finally:
        await s.stop()


async def test_own_writes_are_not_outside_changes(ws, session):
    a = uri(ws / "a.py")
    hunks = (await session.propose("p", {a: [(rng(1, 0, 2, 0), "TWO\n"), (rng(5, 0, 6, 0), "SIX\n")]}))["hunks"]
    await asyncio.sleep(0.7)
    await session.command("stet.accept", {"hunkIds": [hunks[0]["id"]]})
    await asyncio.sleep(0.6)
    ops = [line for line in (await session.request("stet/listHunks", {}))["hunks"]]
    assert {h["id"]: h["status"] for h in ops} == {hunks[0]["id"]: "applied", hunks[1]["id"]: "pending"}


async def test_reading_a_file_is_not_a_change(ws):
    """watchdog reports a file opened and closed without a write (a read: an editor, grep, Stet's
    own re-check): none of it is a change. Taken for one, each re-check's read triggered the next,
    and the server re-sent the same hunks every ~150 ms forever."""
    s = Session(ws, capabilities="neovim@v0.7.0")  # only the server's own watcher reports changes
    await s.start()
    try:
        a = uri(ws / "a.py")
        await s.propose("p", {a: [(rng(4, 0, 5, 0), "FIVE\n")]})
        await asyncio.sleep(0.7)  # the folder is watched within a rescan
        s.changed.clear()
        for _ in range(3):
            read(ws / "a.py")
        await asyncio.sleep(2.0)
        assert s.changed == [], f"{len(s.changed)} stet/hunksChanged after plain reads"
        # A real change is still seen.
        await written_until_seen(s, ws / "a.py", "new top\n" + A_TEXT, lambda v: list(v.values())[0] == (5, "pending"))
    finally:
        await s.stop()
