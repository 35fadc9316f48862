"""CreateFile, RenameFile and DeleteFile become hunks; accepting them happens exactly once."""

import os

import pytest
from pygls.exceptions import JsonRpcException

from support.harness import ServerDied, Session, read, rng, uri, write


def doc_changes(*changes) -> dict:
    return {"documentChanges": list(changes)}


def create(u, overwrite=False):
    return {"kind": "create", "uri": u, **({"options": {"overwrite": True}} if overwrite else {})}


def rename(a, b):
    return {"kind": "rename", "oldUri": a, "newUri": b}


def delete(u):
    return {"kind": "delete", "uri": u}


def text_edit(u, r, text, version=None):
    return {"textDocument": {"uri": u, "version": version}, "edits": [{"range": r, "newText": text}]}


async def propose(session, pid, edit):
    return (await session.request("stet/propose", {"proposalId": pid, "edit": edit}))["hunks"]


async def test_create_with_content_then_accept_and_undo(ws, session):
    new = ws / "pkg" / "new.py"
    u = uri(new)
    (h,) = await propose(session, "c", doc_changes(create(u), text_edit(u, rng(0, 0, 0, 0), "print('hi')\n")))
    assert h["kind"] == "create" and h["uri"] == u and h["oldText"] == "" and h["newText"] == "print('hi')\n"
    assert not new.exists()
    res = await session.command("stet.accept", {"hunkIds": [h["id"]]})
    assert res["hunks"][0]["status"] == "applied"
    assert read(new) == "print('hi')\n"
    res = await session.command("stet.undo", {"hunkIds": [h["id"]]})
    assert res["hunks"][0]["status"] == "pending" and not new.exists()


async def test_reject_create_writes_nothing(ws, session):
    u = uri(ws / "nope.txt")
    (h,) = await propose(session, "c", doc_changes(create(u), text_edit(u, rng(0, 0, 0, 0), "x\n")))
    await session.command("stet.reject", {"hunkIds": [h["id"]], "feedback": "not needed"})
    assert not (ws / "nope.txt").exists()


async def test_delete_shows_what_would_be_lost_and_refuses_when_changed(ws, session):
    b = uri(ws / "b.txt")
    (h,) = await propose(session, "d", doc_changes(delete(b)))
    assert h["kind"] == "delete" and h["oldText"] == "alpha\nbeta\ngamma\n" and h["newText"] == ""
    write(ws / "b.txt", "alpha\nbeta\ngamma\nmy own line\n")  # changed since the proposal
    # Refused either way: as a Conflict when the change was noticed first, else found stale on accepting.
    try:
        res = await session.command("stet.accept", {"hunkIds": [h["id"]]})
        assert res["hunks"][0]["status"] == "stale"
    except JsonRpcException as err:
        assert err.code == -32002
    assert read(ws / "b.txt").endswith("my own line\n")
    states = {x["id"]: x["status"] for x in await session.hunks()}
    assert states[h["id"]] == "stale"


@pytest.mark.parametrize("op", ["delete", "rename"])
async def test_unsaved_work_in_an_open_buffer_is_never_deleted_or_moved_away(ws, session, op):
    """The file on disk is what a delete or rename acts on: while the editor holds unsaved
    changes of it, accepting is refused (stale) and the file and the buffer stay as they are."""
    b = uri(ws / "b.txt")
    session.open(ws / "b.txt")
    session.type(b, rng(3, 0, 3, 0), "unsaved work\n")
    change = delete(b) if op == "delete" else rename(b, uri(ws / "moved.txt"))
    (h,) = await propose(session, op, doc_changes(change))
    try:
        res = await session.command("stet.accept", {"hunkIds": [h["id"]]})
        assert res["hunks"][0]["status"] == "stale"
    except JsonRpcException as err:  # noticed before the accept: refused as a Conflict
        assert err.code == -32002
    assert read(ws / "b.txt") == "alpha\nbeta\ngamma\n" and not (ws / "moved.txt").exists()
    assert session.text(b) == "alpha\nbeta\ngamma\nunsaved work\n"
    # Once saved, the file holds what the proposal was made against: the operation may go ahead.
    session.save(ws / "b.txt")
    await session.hunks_until(lambda hs: {x["id"]: x["status"] for x in hs}[h["id"]] == "pending", "pending once saved")
    res = await session.command("stet.accept", {"hunkIds": [h["id"]]})
    assert res["hunks"][0]["status"] == "applied"
    assert not (ws / "b.txt").exists()
    if op == "rename":
        assert read(ws / "moved.txt") == "alpha\nbeta\ngamma\nunsaved work\n"


async def test_delete_accept_and_undo_restores(ws, session):
    b = uri(ws / "b.txt")
    (h,) = await propose(session, "d", doc_changes(delete(b)))
    res = await session.command("stet.accept", {"hunkIds": [h["id"]]})
    assert res["hunks"][0]["status"] == "applied" and not (ws / "b.txt").exists()
    await session.command("stet.undo", {"hunkIds": [h["id"]]})
    assert read(ws / "b.txt") == "alpha\nbeta\ngamma\n"


async def test_rename_with_edits_that_follow_the_file(ws, session):
    a, moved = uri(ws / "a.py"), uri(ws / "src" / "moved.py")
    hunks = await propose(session, "r", doc_changes(rename(a, moved), text_edit(moved, rng(0, 0, 1, 0), "LINE ONE\n")))
    kinds = {h["kind"]: h for h in hunks}
    assert set(kinds) == {"rename", "edit"}
    assert kinds["rename"]["uri"] == a and kinds["rename"]["newUri"] == moved
    assert kinds["edit"]["uri"] == a and kinds["edit"]["oldText"] == "line 1\n"  # still where the file is
    # Accept the rename first: the edit hunk follows the file.
    await session.command("stet.accept", {"hunkIds": [kinds["rename"]["id"]]})
    assert not (ws / "a.py").exists() and (ws / "src" / "moved.py").exists()
    states = {h["id"]: h for h in await session.hunks()}
    assert states[kinds["edit"]["id"]]["uri"] == moved and states[kinds["edit"]["id"]]["status"] == "pending"
    await session.command("stet.accept", {"hunkIds": [kinds["edit"]["id"]]})
    assert read(ws / "src" / "moved.py").startswith("LINE ONE\nline 2\n")
    # Undo the rename: the file and its hunks go back.
    await session.command("stet.undo", {"hunkIds": [kinds["rename"]["id"]]})
    assert read(ws / "a.py").startswith("LINE ONE\n") and not (ws / "src" / "moved.py").exists()
    states = {h["id"]: h for h in await session.hunks()}
    assert states[kinds["edit"]["id"]]["uri"] == a


async def test_rename_and_edit_accepted_together(ws, session):
    a, moved = uri(ws / "a.py"), uri(ws / "moved.py")
    hunks = await propose(session, "r", doc_changes(rename(a, moved), text_edit(moved, rng(2, 0, 3, 0), "THREE\n")))
    assert sorted(h["kind"] for h in hunks) == ["edit", "rename"]
    res = await session.command("stet.acceptAll", {"proposalId": "r"})
    assert {h["status"] for h in res["hunks"]} == {"applied"}
    assert read(ws / "moved.py").splitlines()[2] == "THREE" and not (ws / "a.py").exists()


async def test_rename_never_overwrites(ws, session):
    a, b = uri(ws / "a.py"), uri(ws / "target.py")
    (h,) = await propose(session, "r", doc_changes(rename(a, b)))
    write(ws / "target.py", "someone else's file\n")
    await session.command("stet.accept", {"hunkIds": [h["id"]]})
    assert read(ws / "target.py") == "someone else's file\n" and (ws / "a.py").exists()
    states = {x["id"]: x["status"] for x in await session.hunks()}
    assert states[h["id"]] == "stale"


async def test_bad_file_operations_are_refused(ws, session):
    a = uri(ws / "a.py")
    for edit in (
        doc_changes(create(a)),  # exists
        doc_changes(delete(uri(ws / "missing.txt"))),
        doc_changes(rename(uri(ws / "missing.txt"), uri(ws / "x.txt"))),
        doc_changes(rename(a, uri(ws / "b.txt"))),  # would overwrite
        doc_changes({"kind": "delete", "uri": uri(ws), "options": {"recursive": True}}),
        doc_changes(create(uri(ws / ".." / "escape.txt"))),
    ):
        with pytest.raises(JsonRpcException) as err:
            await propose(session, "bad", edit)
        assert err.value.code in (-32602, -32003), edit
    assert await session.hunks() == []
    assert not (ws.parent / "escape.txt").exists()


async def test_supersede_within_a_task(ws, session):
    a = uri(ws / "a.py")
    first = (
        await session.request(
            "stet/propose",
            {
                "proposalId": "t-1",
                "taskId": "t",
                "edit": {
                    "changes": {
                        a: [
                            {"range": rng(1, 0, 2, 0), "newText": "first idea\n"},
                            {"range": rng(6, 0, 7, 0), "newText": "keep\n"},
                        ]
                    }
                },
            },
        )
    )["hunks"]
    second = (
        await session.request(
            "stet/propose",
            {
                "proposalId": "t-2",
                "taskId": "t",
                "edit": {"changes": {a: [{"range": rng(1, 0, 2, 0), "newText": "second idea\n"}]}},
            },
        )
    )["hunks"]
    states = {h["id"]: h["status"] for h in await session.hunks()}
    assert states[first[0]["id"]] == "superseded"  # the agent changed its mind about this line
    assert states[first[1]["id"]] == "pending"  # untouched by the new proposal
    assert states[second[0]["id"]] == "pending"
    # Another task's proposal over the same lines supersedes nothing.
    await session.request(
        "stet/propose",
        {
            "proposalId": "u-1",
            "taskId": "u",
            "edit": {"changes": {a: [{"range": rng(1, 0, 2, 0), "newText": "other task\n"}]}},
        },
    )
    assert {h["id"]: h["status"] for h in await session.hunks()}[second[0]["id"]] == "pending"


@pytest.mark.parametrize(
    "point", ["decide:after-commit", "effect:before-write", "effect:after-write", "effect:before-confirm"]
)
async def test_file_operations_survive_sigkill_between_decision_and_effect(ws, point):
    s = Session(ws, env={"STET_FAULT": point})
    await s.start()
    new, a, moved, b = ws / "new.txt", uri(ws / "a.py"), uri(ws / "moved.py"), uri(ws / "b.txt")
    hunks = await propose(
        s,
        "ops",
        doc_changes(create(uri(new)), text_edit(uri(new), rng(0, 0, 0, 0), "fresh\n"), rename(a, moved), delete(b)),
    )
    assert {h["kind"] for h in hunks} == {"create", "rename", "delete"}
    with pytest.raises(ServerDied):
        await s.command("stet.acceptAll", {"proposalId": "ops"})
    await s.died()
    s2 = Session(ws)
    await s2.start()
    try:
        assert {h["status"] for h in await s2.hunks()} == {"applied"}, point
        assert read(new) == "fresh\n"
        assert (ws / "moved.py").exists() and not (ws / "a.py").exists()
        assert not (ws / "b.txt").exists()
        assert sorted(os.listdir(ws)) == [".stet", "moved.py", "new.txt"]
    finally:
        await s2.stop()
