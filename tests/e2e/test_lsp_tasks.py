"""Tasks through the real language server: `stet/taskContext`, and re-proposals within a task."""

import pytest
from pygls.exceptions import JsonRpcException

from support.harness import read, rng, uri
from support.workers import stet

A_LINES = [f"line {i}\n" for i in range(1, 11)]
EDITS = [(rng(1, 0, 2, 0), "LINE TWO\n"), (rng(4, 0, 5, 0), "LINE FIVE\n"), (rng(7, 0, 8, 0), "LINE EIGHT\n")]


async def test_task_context_answers_and_errors(ws, session):
    assert stet(ws, "task", "start", "T", "--id", "t1", "--goal", "shout").returncode == 0
    ctx = await session.request("stet/taskContext", {"taskId": "t1"})
    assert ctx["task"]["goal"] == "shout" and "markdown" not in ctx
    ctx = await session.request("stet/taskContext", {"taskId": "t1", "markdown": True})
    assert ctx["markdown"].startswith("# Task t1: T\n")
    with pytest.raises(JsonRpcException) as err:
        await session.request("stet/taskContext", {"taskId": "nope"})
    assert err.value.code == -32001 and "unknown task nope" in err.value.message
    for bad in ({}, {"taskId": 5}, [1]):
        with pytest.raises(JsonRpcException) as err:
            await session.request("stet/taskContext", bad)
        assert err.value.code == -32602


async def test_the_same_hunks_proposed_again_in_a_task_are_not_duplicated(ws, session):
    a = uri(ws / "a.py")
    first = await session.propose("p1", {a: EDITS}, taskId="t1")
    assert first["alreadyProposed"] == [] and first["rejectedBefore"] == []
    two, five, eight = (h["id"] for h in first["hunks"])
    await session.command("stet.accept", {"hunkIds": [two]})
    await session.command("stet.reject", {"hunkIds": [five], "feedback": "five stays"})
    # A new proposal with the same edits (the applied one is now no change at all).
    again = await session.propose("p2", {a: EDITS}, taskId="t1")
    assert again["hunks"] == []
    assert [h["id"] for h in again["alreadyProposed"]] == [eight]
    assert [(h["id"], h["feedback"]) for h in again["rejectedBefore"]] == [(five, "five stays")]
    assert len(await session.hunks()) == 3
    # Its replay answers the same.
    replay = await session.propose("p2", {a: EDITS}, taskId="t1")
    assert replay == again
    # Another task, or no task, is another matter: the change is proposed again.
    other = await session.propose("p3", {a: EDITS}, taskId="t2")
    assert len(other["hunks"]) == 2 and other["rejectedBefore"] == []
    assert read(ws / "a.py") == "".join(A_LINES).replace("line 2\n", "LINE TWO\n")


async def test_after_undo_a_once_rejected_change_counts_as_proposed(ws, session):
    a = uri(ws / "a.py")
    (h,) = (await session.propose("p1", {a: EDITS[:1]}, taskId="t1"))["hunks"]
    await session.command("stet.reject", {"hunkIds": [h["id"]], "feedback": "no"})
    flagged = await session.propose("p2", {a: EDITS[:1]}, taskId="t1")
    assert [x["id"] for x in flagged["rejectedBefore"]] == [h["id"]]
    await session.command("stet.undo", {"hunkIds": [h["id"]]})
    # The developer took the rejection back: the replay reports it as pending, not rejected.
    replay = await session.propose("p2", {a: EDITS[:1]}, taskId="t1")
    assert replay["rejectedBefore"] == [] and [x["status"] for x in replay["alreadyProposed"]] == ["pending"]
