"""The whole story with real processes: an agent that writes files itself runs under `stet run`;
its work becomes proposals; the developer accepts some in the editor (the real language server),
rejects one with feedback; the agent runs again, reads the feedback, and leaves that change
alone; `stet resume` (and the editor's `stet/taskContext`) show everything, no hunk twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.capturetools import AGENT, agent_repo, duplicates, hunks
from support.clitools import stet, stet_json
from support.harness import Session, effects_left, read, until
from support.scripted_agent import A_BASE, EDITS, NEW_PY

TASK = "greeting"
FEEDBACK = "Keep printing world: the smoke test greps for it."


def ids_by(hs: list[dict]) -> dict:
    out = {}
    for h in hs:
        key = (h["oldText"], h["newText"]) if h["kind"] == "edit" else (h["kind"], Path(h["uri"]).name)
        out[key] = h["id"]
    return out


def grouped(ctx: dict) -> dict:
    return {k: sorted(h["id"] for h in v) for k, v in ctx["hunks"].items()}


async def test_run_review_in_the_editor_run_again_resume(tmp_path):
    root = agent_repo(tmp_path / "repo")
    p = await asyncio.to_thread(stet, "run", "--task", TASK, "--", *AGENT, "1", cwd=root)
    assert p.returncode == 0 and "check: ok" in p.stdout, p.stderr
    first = hunks(root, "--task", TASK)
    assert len(first) == 7 and {h["status"] for h in first} == {"pending"}
    assert read(root / "a.py") == A_BASE, "the agent's edits wait for review; the files are as before"
    ids = ids_by(first)
    limit, greet, main = ids[EDITS["limit"]], ids[EDITS["greet"]], ids[EDITS["main"]]
    create = ids[("create", "new.py")]

    dev = Session(root)
    await dev.start()
    try:
        # The editor sees the CLI's proposals (live sync), and the developer reviews there.
        assert {h["id"] for h in await dev.hunks(taskId=TASK)} == {h["id"] for h in first}
        dev.open(root / "a.py")
        accepted = await dev.command("stet.accept", {"hunkIds": [limit, greet]})
        assert [h["status"] for h in accepted["hunks"]] == ["applied", "applied"]
        await dev.command("stet.reject", {"hunkIds": [main], "feedback": FEEDBACK})
        await dev.command("stet.accept", {"hunkIds": [create]})  # not open: written to disk
        dev.save(root / "a.py")
        await until(lambda: effects_left(root) == 0, "the save recorded")
        a_now = read(root / "a.py")
        assert EDITS["limit"][1] in a_now and EDITS["greet"][1] in a_now and EDITS["main"][0] in a_now
        assert read(root / "new.py") == NEW_PY

        # The agent runs again: it reads the review, leaves the rejected change alone, adds one.
        # While it works, the running server sees old.txt and r.txt gone: their pending hunks go
        # stale for a moment. The capture still knows them for the same changes (no duplicates).
        p = await asyncio.to_thread(stet, "run", "--task", TASK, "--", *AGENT, "2", "--linger=1.5", cwd=root)
        assert p.returncode == 0 and "left alone as the developer asked: ['main']" in p.stdout, (p.stdout, p.stderr)
        assert read(root / "a.py") == a_now, "accepted work is not taken out, nothing proposed twice"

        ctx = stet_json("resume", TASK, cwd=root)
        everything = hunks(root, "--task", TASK)
        assert duplicates(everything) == [] and len(everything) == 8
        (b,) = [h["id"] for h in everything if Path(h["uri"]).name == "b.txt"]
        pending = sorted(i for k, i in ids.items() if i not in (limit, greet, main, create))
        assert grouped(ctx) == {
            "completed": sorted([limit, greet, create]),
            "staged": [],
            "acceptedWithChanges": [],
            "pendingConfirmation": sorted([*pending, b]),
            "rejected": [main],
            "stale": [],
            "superseded": [],
            "removedSinceApplied": [],
        }
        assert ctx["hunks"]["rejected"][0]["feedback"] == FEEDBACK
        # The editor's view of the task is the same.
        served = await dev.request("stet/taskContext", {"taskId": TASK})
        assert grouped(served) == grouped(ctx)
        markdown = stet("resume", TASK, cwd=root).stdout
        assert FEEDBACK in markdown
    finally:
        await dev.stop()


async def test_kept_hunks_in_the_editor(tmp_path):
    """A capture with --keep while the file is open: the editor shows the hunk where the agent's
    text is; reject takes it out of the buffer, accept changes nothing."""
    root = agent_repo(tmp_path / "repo")
    dev = Session(root)
    stet("capture", cwd=root)  # creates the store
    await dev.start()
    try:
        u = dev.open(root / "a.py")
        agent_text = A_BASE.replace(*EDITS["limit"]).replace(*EDITS["main"])
        (root / "a.py").write_text(agent_text)
        dev.type(u, {"start": {"line": 0, "character": 0}, "end": {"line": 13, "character": 0}}, agent_text)
        dev.save(root / "a.py")
        kept = stet_json("capture", "--keep", cwd=root)["hunks"]
        assert len(kept) == 2

        def shown_kept(hs: list[dict]) -> bool:
            return any(h["newText"] == EDITS["limit"][1] and h["inFile"] for h in hs)

        shown = {h["id"]: h for h in await dev.hunks_until(shown_kept, "the kept hunks shown in the buffer")}
        limit = next(h for h in shown.values() if h["newText"] == EDITS["limit"][1])
        assert limit["kept"] and limit["inFile"] is True and limit["range"]["start"]["line"] == 0
        main = next(h for h in shown.values() if h["newText"] == EDITS["main"][1])
        lenses = await dev.request("textDocument/codeLens", {"textDocument": {"uri": u}})
        titles = sorted(lens["command"]["title"] for lens in lenses if lens["range"]["start"]["line"] == 0)
        assert any(t.startswith("Accept (keep: ") for t in titles), titles
        assert "Reject (put the old text back)" in titles
        applies = dev.apply_requests
        r = await dev.command("stet.accept", {"hunkIds": [limit["id"]]})
        assert r["hunks"][0]["status"] == "applied" and dev.apply_requests == applies, "nothing to write"
        r = await dev.command("stet.reject", {"hunkIds": [main["id"]], "feedback": "no"})
        assert r["hunks"][0]["status"] == "rejected"
        assert dev.text(u) == A_BASE.replace(*EDITS["limit"]), "the buffer has the old line back"
    finally:
        await dev.stop()


async def test_kept_file_operations_stay_pending_when_a_server_checks_them(tmp_path):
    """A server's recovery re-checks every open hunk against the files: a kept delete or rename
    is found done (its new state is in the files), not stale."""
    root = agent_repo(tmp_path / "repo")
    assert (await asyncio.to_thread(stet, "run", "--keep", "--", *AGENT, "1", cwd=root)).returncode == 0
    dev = Session(root)
    await dev.start()
    try:
        states = [(h["kind"], Path(h["uri"]).name, h["status"], h["inFile"]) for h in await dev.hunks()]
        assert len(states) == 7 and {s[2:] for s in states} == {("pending", True)}, states
    finally:
        await dev.stop()
