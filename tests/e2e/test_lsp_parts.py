"""Parts of a hunk through the real language server: stet.acceptLines / stet.rejectLines on
closed files and in an open buffer, their answers, replays and refusals."""

import asyncio

import pytest
from pygls.exceptions import JsonRpcException

from support.harness import Session, read, rng, until, uri

# a.py holds "line 1".."line 10": lines 5-7 (0-based 4-6) replaced by A..D
OLD = ["line 5\n", "line 6\n", "line 7\n"]
NEW = ["A\n", "B\n", "C\n", "D\n"]


@pytest.fixture
async def session(ws, engine):
    s = Session(ws, init_options={"db": engine.db(ws)} if engine.pg else None)
    await s.start()
    yield s
    if s.client is not None and s.client._server.returncode is None:
        await s.stop()


async def _propose(session, ws) -> dict:
    res = await session.propose("p1", {uri(ws / "a.py"): [(rng(4, 0, 7, 0), "".join(NEW))]}, message="letters")
    (h,) = res["hunks"]
    assert h["oldText"] == "".join(OLD) and h["newText"] == "".join(NEW)
    return h


def _file(ws) -> list[str]:
    return read(ws / "a.py").splitlines()


async def test_accept_lines_on_a_closed_file(ws, session):
    h = await _propose(session, ws)
    res = await session.command(
        "stet.acceptLines", {"hunkId": h["id"], "old": [[0, 0]], "new": [[0, 1]], "requestId": "r1"}
    )
    part, rest = res["part"], res["rest"]
    assert part["status"] == "applied" and rest["status"] == "pending"
    assert _file(ws)[3:9] == ["line 4", "line 6", "line 7", "A", "B", "line 8"]
    hunks = {x["id"]: x for x in await session.hunks()}
    assert hunks[h["id"]]["status"] == "superseded" and hunks[h["id"]]["parts"] == [part["id"], rest["id"]]
    assert rest["message"] == part["message"] == "letters" and rest["proposalId"] == "p1"
    again = await session.command(
        "stet.acceptLines", {"hunkId": h["id"], "old": [[0, 0]], "new": [[0, 1]], "requestId": "r1"}
    )
    assert (again["part"]["id"], again["rest"]["id"]) == (part["id"], rest["id"])
    assert len(await session.hunks()) == 3, "the same requestId twice: one split"
    await session.command("stet.accept", {"hunkIds": [rest["id"]]})
    assert _file(ws)[4:8] == ["A", "B", "C", "D"]


async def test_accept_lines_in_an_open_buffer(ws, session):
    h = await _propose(session, ws)
    a = session.open(ws / "a.py")
    res = await session.command("stet.acceptLines", {"hunkId": h["id"], "new": [[2, 3]], "old": [[0, 2]]})
    part, rest = res["part"], res["rest"]
    assert part["status"] == "applied"
    assert session.text(a).splitlines()[3:7] == ["line 4", "C", "D", "line 8"]
    # the rest adds A and B before C (the lines it shares with the file are its context)
    assert rest["status"] == "pending" and rest["oldText"] == "" and rest["newText"] == "A\nB\n"
    assert rest["range"] == rng(4, 0, 4, 0)
    await session.command("stet.accept", {"hunkIds": [rest["id"]]})
    assert session.text(a).splitlines()[3:9] == ["line 4", "A", "B", "C", "D", "line 8"]


async def test_the_split_is_told_once_the_buffer_holds_the_part(ws, session):
    """The rest of a split stands where the part's edit leaves its text: told before the
    editor's buffer has that edit, an editor draws it off by the edit's lines, and nothing
    after corrects it (VS Code's block of the rest one line low). Every
    stet/hunksChanged describes the buffer as the editor has it when it arrives - also while
    the editor takes its time to apply the part."""
    h = await _propose(session, ws)
    a = session.open(ws / "a.py")
    await until(lambda: session.changed, "the open buffer's hunks told")
    session.hold = asyncio.Event()  # the editor applies the part only once this is set
    decided = asyncio.ensure_future(
        session.command("stet.acceptLines", {"hunkId": h["id"], "old": [], "new": [[0, 1]]})
    )
    await until(lambda: session.apply_requests == 1, "the part's edit sent to the editor")
    await session.wait_quiet()  # the server's burst of announcements has had its time
    session.hold.set()
    rest = (await decided)["rest"]
    assert session.text(a).splitlines()[3:10] == ["line 4", "line 5", "line 6", "line 7", "A", "B", "line 8"]
    await until(lambda: any(rest["id"] in {x["id"] for x in c["hunks"]} for c in session.changed), "the rest told")
    for told, buffer in zip(session.changed, session.changed_buffers, strict=True):
        assert buffer is not None, told["uri"]
        lines = buffer.splitlines(keepends=True)
        for x in told["hunks"]:
            if x["status"] == "pending" and x["oldText"]:
                r = x["range"]
                there = "".join(lines[r["start"]["line"] : r["end"]["line"]])
                assert there == x["oldText"], f"{x['id']} told at {r} before the buffer held it: {there!r}"


async def test_reject_lines_with_feedback(ws, session):
    h = await _propose(session, ws)
    res = await session.command(
        "stet.rejectLines", {"hunkId": h["id"], "old": [[1, 1]], "new": [], "feedback": "keep line 6"}
    )
    part, rest = res["part"], res["rest"]
    assert part["status"] == "rejected" and part["feedback"] == "keep line 6"
    assert part["oldText"] == "line 6\n" and part["newText"] == ""
    assert rest["status"] == "pending"
    assert read(ws / "a.py") == "".join(f"line {i}\n" for i in range(1, 11))
    await session.command("stet.accept", {"hunkIds": [rest["id"]]})
    assert _file(ws)[3:10] == ["line 4", "line 6", "A", "B", "C", "D", "line 8"]


async def test_every_line_is_the_whole_hunk(ws, session):
    h = await _propose(session, ws)
    res = await session.command("stet.rejectLines", {"hunkId": h["id"], "old": [[0, 2]], "new": [[0, 3]]})
    assert res["rest"] is None and res["part"]["id"] == h["id"] and res["part"]["status"] == "rejected"


@pytest.mark.parametrize(
    "params",
    [
        {"old": [], "new": []},
        {"old": [[0, 3]]},
        {"new": [[4, 4]]},
        {"new": [[1, 0]]},
        {"new": "1-2"},
        {"new": [[0, True]]},
    ],
)
async def test_bad_selections_are_invalid_params_and_change_nothing(ws, session, params):
    h = await _propose(session, ws)
    with pytest.raises(JsonRpcException) as exc:
        await session.command("stet.acceptLines", {"hunkId": h["id"], **params})
    assert exc.value.code == -32602
    (same,) = await session.hunks()
    assert same == h
    assert read(ws / "a.py") == "".join(f"line {i}\n" for i in range(1, 11))


@pytest.mark.parametrize(
    ("selection", "shared"),
    [
        ({"new": [[0, 0]]}, False),  # the part adds A below line 7: it and the rest start apart
        ({"old": [[0, 0]], "new": [[0, 0]]}, True),  # the part replaces lines 5-7 too: one line
    ],
)
async def test_undo_of_a_part(ws, session, selection, shared):
    h = await _propose(session, ws)
    a = session.open(ws / "a.py")
    res = await session.command("stet.acceptLines", {"hunkId": h["id"], **selection})
    part, rest = res["part"]["id"], res["rest"]["id"]
    res_text = session.text(a)  # the file with the part
    undone = await session.command("stet.undo", {"hunkIds": [part]})
    assert undone["hunks"][0]["status"] == "pending"
    assert read(ws / "a.py") == "".join(f"line {i}\n" for i in range(1, 11))
    hunks = {x["id"]: x for x in await session.hunks()}
    assert hunks[h["id"]]["status"] == "superseded"
    assert (hunks[part]["status"], hunks[rest]["status"]) == ("pending", "stale")
    # The lenses: an editor draws a line's lenses as one row, so when the part and the
    # stale rest start on the same line each button names its hunk; every one decides only its own.
    lenses = await session.request("textDocument/codeLens", {"textDocument": {"uri": a}})
    own = [(x["range"]["start"]["line"], x["command"]) for x in lenses if "hunkIds" in x["command"]["arguments"][0]]
    assert all(len(c["arguments"][0]["hunkIds"]) == 1 for _, c in own)
    titles = {hid: [c["title"] for _, c in own if c["arguments"][0]["hunkIds"] == [hid]] for hid in (part, rest)}
    lines = {hid: {line for line, c in own if c["arguments"][0]["hunkIds"] == [hid]} for hid in (part, rest)}
    assert (lines[part] == lines[rest]) is shared
    if shared:
        assert titles == {part: ["Accept part (-3 +3)", "Reject part"], rest: ["Reject rest (no longer applies)"]}
    else:
        assert titles == {part: ["Accept (-0 +1)", "Reject"], rest: ["Reject (no longer applies)"]}
    assert all(t.startswith(("Accept", "Reject")) for ts in titles.values() for t in ts)
    # The part's Accept accepts the part alone (the rest, its old text found again, is pending).
    accept = next(c for _, c in own if c["command"] == "stet.accept")
    assert accept["arguments"] == [{"hunkIds": [part]}]
    await session.command(accept["command"], accept["arguments"][0])
    hunks = {x["id"]: x for x in await session.hunks()}
    assert (hunks[part]["status"], hunks[rest]["status"]) == ("applied", "pending")
    assert session.text(a) == res_text


async def test_an_unknown_hunk(ws, session):
    with pytest.raises(JsonRpcException) as exc:
        await session.command("stet.acceptLines", {"hunkId": "nope", "new": [[0, 0]]})
    assert exc.value.code == -32001


async def _actions(session, a, r) -> list[dict]:
    return await session.request(
        "textDocument/codeAction", {"textDocument": {"uri": a}, "range": r, "context": {"diagnostics": []}}
    )


async def test_a_selection_of_old_lines_offers_accept_and_reject_of_them(ws, session):
    """Plain LSP editors: the code action on a selection of a hunk's old lines."""
    h = await _propose(session, ws)
    a = session.open(ws / "a.py")
    # a cursor in the hunk: no lines to decide apart
    assert not [x for x in await _actions(session, a, rng(5, 2, 5, 2)) if "Lines" in x["command"]["command"]]
    # lines 5 and 6 of the file selected (0-based 4 and 5: the hunk's old lines 0-1), whole lines
    actions = await _actions(session, a, rng(4, 0, 6, 0))
    lines = {x["title"]: x["command"] for x in actions if x["command"]["command"].endswith("Lines")}
    assert set(lines) == {"Stet: accept selected lines", "Stet: reject selected lines"}
    accept = lines["Stet: accept selected lines"]
    assert accept["command"] == "stet.acceptLines"
    assert accept["arguments"] == [{"hunkId": h["id"], "old": [[0, 1]], "new": []}]
    res = await session.command(accept["command"], accept["arguments"][0])
    assert res["part"]["status"] == "applied"
    # the selected old lines removed, nothing added (git gui's Stage Lines on `-` lines)
    assert session.text(a).splitlines()[3:6] == ["line 4", "line 7", "line 8"]
    assert res["rest"]["status"] == "pending"
