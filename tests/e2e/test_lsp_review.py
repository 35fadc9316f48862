"""End to end through the real server process: every request and command of docs/protocol.md."""

import asyncio
import os
import stat

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.harness import Session, read, rng, until, uri, write


def field(hunks: list[dict], hid: str, name: str):
    return next(h[name] for h in hunks if h["id"] == hid)


def status(hunks: list[dict], hid: str) -> str | None:
    return next((h["status"] for h in hunks if h["id"] == hid), None)


A_LINES = [f"line {i}\n" for i in range(1, 11)]


@pytest.fixture
async def session(ws, engine):
    """The contract on each store engine (SQLite, and PostgreSQL when STET_TEST_PG names a cluster)."""
    s = Session(ws, init_options={"db": engine.db(ws)} if engine.pg else None)
    await s.start()
    yield s
    if s.client is not None and s.client._server.returncode is None:
        await s.stop()


def codes(exc_info) -> int:
    return exc_info.value.code


async def propose_two(session, ws, pid="p1"):
    a = uri(ws / "a.py")
    res = await session.propose(pid, {a: [(rng(1, 0, 2, 0), "LINE TWO\n"), (rng(5, 0, 6, 0), "line 6a\nline 6b\n")]})
    return a, res["hunks"]


async def test_propose_shapes_hunk_states(ws, session):
    a, hunks = await propose_two(session, ws)
    h = hunks[0]
    assert set(h) >= {
        "id",
        "proposalId",
        "taskId",
        "uri",
        "kind",
        "status",
        "range",
        "oldText",
        "newText",
        "newUri",
        "message",
        "feedback",
        "version",
        "decidedAt",
    }
    assert h["uri"] == a and h["kind"] == "edit" and h["proposalId"] == "p1" and h["version"] == 1
    assert hunks[1]["oldText"] == "line 6\n" and hunks[1]["newText"] == "line 6a\nline 6b\n"
    assert hunks[1]["range"] == rng(5, 0, 6, 0)
    assert [x["id"] for x in await session.hunks()] == [x["id"] for x in hunks]


async def test_document_changes_form_and_task_fields(ws, session):
    b = uri(ws / "b.txt")
    edit = {
        "documentChanges": [
            {"textDocument": {"uri": b, "version": None}, "edits": [{"range": rng(0, 0, 0, 5), "newText": "ALPHA"}]}
        ]
    }
    res = await session.request(
        "stet/propose", {"proposalId": "dc", "edit": edit, "taskId": "t1", "agent": "bot", "message": "capitalise"}
    )
    (h,) = res["hunks"]
    assert h["taskId"] == "t1" and h["message"] == "capitalise" and h["oldText"] == "alpha\n"
    assert (await session.hunks(taskId="t1"))[0]["id"] == h["id"]
    assert await session.hunks(taskId="nope") == []


async def test_replayed_proposal_adds_nothing_and_different_edit_conflicts(ws, session):
    a, hunks = await propose_two(session, ws)
    again = await session.propose("p1", {a: [(rng(1, 0, 2, 0), "LINE TWO\n"), (rng(5, 0, 6, 0), "line 6a\nline 6b\n")]})
    assert [h["id"] for h in again["hunks"]] == [h["id"] for h in hunks]
    assert len(await session.hunks()) == 2
    with pytest.raises(JsonRpcException) as err:
        await session.propose("p1", {a: [(rng(0, 0, 0, 0), "other\n")]})
    assert codes(err) == -32002


async def test_accept_closed_file_writes_atomically_and_keeps_mode(ws, session):
    os.chmod(ws / "a.py", 0o640)
    a, hunks = await propose_two(session, ws)
    res = await session.command("stet.accept", {"hunkIds": [hunks[1]["id"]]})
    (h,) = res["hunks"]
    assert h["status"] == "applied" and h["version"] == 3 and h["decidedAt"]
    assert h["range"] == rng(5, 0, 7, 0)
    assert read(ws / "a.py") == "".join(A_LINES[:5] + ["line 6a\n", "line 6b\n"] + A_LINES[6:])
    assert stat.S_IMODE(os.stat(ws / "a.py").st_mode) == 0o640
    assert not [n for n in os.listdir(ws) if "stet-tmp" in n]
    # The other hunk is above: its range is unchanged; accept it too.
    res = await session.command("stet.accept", {"hunkIds": [hunks[0]["id"]]})
    assert res["hunks"][0]["status"] == "applied"
    assert read(ws / "a.py").count("LINE TWO") == 1 and "line 2\n" not in read(ws / "a.py")


async def test_accept_open_buffer_goes_through_apply_edit(ws, session):
    a = session.open(ws / "a.py")
    _, hunks = await propose_two(session, ws)
    res = await session.command("stet.accept", {"hunkIds": [h["id"] for h in hunks]})
    assert [h["status"] for h in res["hunks"]] == ["applied", "applied"]
    assert session.apply_requests == 1
    text = session.text(a)
    assert text.count("LINE TWO") == 1 and "line 6a\nline 6b\n" in text
    assert read(ws / "a.py") == "".join(A_LINES)  # the buffer changed, not the file
    assert res["hunks"][1]["range"] == rng(5, 0, 7, 0)


async def test_neovim_style_late_did_change_is_confirmed(ws):
    s = Session(ws, late_changes=True)
    await s.start()
    try:
        a = s.open(ws / "a.py")
        _, hunks = await propose_two(s, ws)
        res = await s.command("stet.accept", {"hunkIds": [hunks[0]["id"]]})
        assert res["hunks"][0]["status"] == "applied"
        assert s.text(a).count("LINE TWO") == 1
    finally:
        await s.stop()


@pytest.mark.parametrize("late", [0.8, 1.5])
async def test_a_pure_insertion_confirmed_by_a_didchange_after_the_wait_is_made_once(ws, late):
    """The editor applies the edit at once but reports it only after the server stopped waiting
    (eglot, a busy VS Code). The hunk's anchor, an empty text, moved below the inserted lines
    when the report came; the retry took that place for the place to insert at and inserted a
    second copy. Each accepted insertion is in the buffer exactly once, and applied."""
    s = Session(ws, late_changes=late)
    await s.start()
    try:
        a = s.open(ws / "a.py")
        inserted = "import logging\nLOG = 1\n\n"
        (h,) = (await s.propose("p", {a: [(rng(2, 0, 2, 0), inserted)]}))["hunks"]
        await s.command("stet.accept", {"hunkIds": [h["id"]]})
        await s.hunks_until(lambda hs: hs[0]["status"] == "applied" and hs[0].get("inFile"), "the insertion applied")
        await asyncio.sleep(late + 0.5)  # any second edit would have arrived by now
        assert s.text(a).count(inserted) == 1, s.text(a)
        (now,) = await s.hunks()
        assert now["status"] == "applied" and now["inFile"] is True and now["range"]["start"]["line"] == 2
    finally:
        await s.stop()


async def test_refused_edit_stays_accepted_then_applies_on_next_change(ws):
    s = Session(ws, refuse_edits=True)
    await s.start()
    try:
        a = s.open(ws / "a.py")
        _, hunks = await propose_two(s, ws)
        res = await s.command("stet.accept", {"hunkIds": [hunks[0]["id"]]})
        assert res["hunks"][0]["status"] == "accepted"
        assert "LINE TWO" not in s.text(a)
        s.refuse_edits = False
        s.type(a, rng(9, 0, 9, 0), "typed ")  # the document changes: the edit is retried
        await s.hunks_until(lambda hs: status(hs, hunks[0]["id"]) == "applied", "the refused edit retried and applied")
        assert s.text(a).count("LINE TWO") == 1
    finally:
        await s.stop()


async def test_reject_with_feedback_and_undo_clears_it(ws, session):
    _, hunks = await propose_two(session, ws)
    hid = hunks[0]["id"]
    res = await session.command("stet.reject", {"hunkIds": [hid], "feedback": "use a constant"})
    h = res["hunks"][0]
    assert h["status"] == "rejected" and h["feedback"] == "use a constant" and h["version"] == 2
    res = await session.command("stet.undo", {"hunkIds": [hid]})
    h = res["hunks"][0]
    assert h["status"] == "pending" and h["feedback"] is None and h["decidedAt"] is None and h["version"] == 3
    assert read(ws / "a.py") == "".join(A_LINES)


async def test_undo_applied_reverts_the_file(ws, session):
    _, hunks = await propose_two(session, ws)
    hid = hunks[1]["id"]
    await session.command("stet.accept", {"hunkIds": [hid]})
    res = await session.command("stet.undo", {"hunkIds": [hid]})
    assert res["hunks"][0]["status"] == "pending"
    assert read(ws / "a.py") == "".join(A_LINES)
    # and accept again: exactly once
    await session.command("stet.accept", {"hunkIds": [hid]})
    assert read(ws / "a.py").count("line 6a\n") == 1


async def test_undo_applied_in_buffer_and_nothing_reverted_when_new_text_gone(ws, session):
    a = session.open(ws / "a.py")
    _, hunks = await propose_two(session, ws)
    hid = hunks[0]["id"]
    await session.command("stet.accept", {"hunkIds": [hid]})
    res = await session.command("stet.undo", {"hunkIds": [hid]})
    assert res["hunks"][0]["status"] == "pending" and session.text(a) == "".join(A_LINES)
    res = await session.command("stet.accept", {"hunkIds": [hid]})
    assert res["hunks"][0]["inFile"] is True
    session.type(a, rng(1, 0, 1, 4), "MINE")  # the developer rewrites the applied line
    listed = await session.hunks_until(lambda hs: field(hs, hid, "inFile") is False, "the rewritten hunk not in file")
    assert [h["inFile"] for h in listed if h["id"] == hid] == [False]
    # Undo of a change that is gone reverts nothing (there is nothing to revert): the decision
    # goes back, and the hunk's old text being gone too, it is stale.
    res = await session.command("stet.undo", {"hunkIds": [hid]})
    assert res["hunks"][0]["status"] in ("pending", "stale") and res["hunks"][0]["inFile"] is None
    listed = await session.hunks_until(lambda hs: status(hs, hid) == "stale", "the undone hunk stale")
    assert [h["status"] for h in listed if h["id"] == hid] == ["stale"]
    assert "MINE TWO" in session.text(a)


async def test_idempotent_by_request_id(ws, session):
    _, hunks = await propose_two(session, ws)
    hid = hunks[0]["id"]
    first = await session.command("stet.accept", {"hunkIds": [hid], "requestId": "r-1"})
    await session.command("stet.undo", {"hunkIds": [hid], "requestId": "r-2"})
    # Replaying r-1 changes nothing and answers the current state (pending after the undo).
    replay = await session.command("stet.accept", {"hunkIds": [hid], "requestId": "r-1"})
    assert first["hunks"][0]["status"] == "applied"
    assert replay["hunks"][0]["status"] == "pending"
    assert read(ws / "a.py") == "".join(A_LINES)
    # Asking for the state a hunk is in is a no-op that succeeds; it does not toggle.
    await session.command("stet.reject", {"hunkIds": [hid]})
    again = await session.command("stet.reject", {"hunkIds": [hid]})
    assert again["hunks"][0]["status"] == "rejected" and again["hunks"][0]["version"] == 5


async def test_expected_versions_conflict_changes_nothing(ws, session):
    _, hunks = await propose_two(session, ws)
    h0, h1 = hunks[0]["id"], hunks[1]["id"]
    with pytest.raises(JsonRpcException) as err:
        await session.command("stet.accept", {"hunkIds": [h0, h1], "expectedVersions": {h0: 1, h1: 7}})
    assert codes(err) == -32002
    assert {h["status"] for h in await session.hunks()} == {"pending"}
    res = await session.command("stet.accept", {"hunkIds": [h0], "expectedVersions": {h0: 1}})
    assert res["hunks"][0]["status"] == "applied"


async def test_many_hunks_all_or_nothing(ws, session):
    _, hunks = await propose_two(session, ws)
    with pytest.raises(JsonRpcException) as err:
        await session.command("stet.accept", {"hunkIds": [hunks[0]["id"], "h-missing"]})
    assert codes(err) == -32001
    await session.command("stet.reject", {"hunkIds": [hunks[1]["id"]]})
    with pytest.raises(JsonRpcException) as err:  # accepting a rejected hunk is forbidden
        await session.command("stet.accept", {"hunkIds": [hunks[0]["id"], hunks[1]["id"]]})
    assert codes(err) == -32002
    states = {h["id"]: h["status"] for h in await session.hunks()}
    assert states == {hunks[0]["id"]: "pending", hunks[1]["id"]: "rejected"}
    assert read(ws / "a.py") == "".join(A_LINES)


async def test_file_and_all_commands(ws, session):
    a, hunks = await propose_two(session, ws)
    b = uri(ws / "b.txt")
    await session.propose("p2", {b: [(rng(0, 0, 1, 0), "ALPHA\n")]}, taskId="t")
    res = await session.command("stet.rejectFile", {"uri": a, "feedback": "not now"})
    assert {h["status"] for h in res["hunks"]} == {"rejected"} and len(res["hunks"]) == 2
    assert {h["feedback"] for h in res["hunks"]} == {"not now"}
    res = await session.command("stet.acceptAll", {"taskId": "t"})
    assert [h["status"] for h in res["hunks"]] == ["applied"]
    assert read(ws / "b.txt").startswith("ALPHA\n")
    await session.command("stet.undo", {"hunkIds": [h["id"] for h in hunks]})
    res = await session.command("stet.acceptFile", {"uri": a})
    assert [h["status"] for h in res["hunks"]] == ["applied", "applied"]
    res = await session.command("stet.rejectAll", {"proposalId": "p1"})
    assert res["hunks"] == []  # nothing pending left


async def test_list_filters_by_status_and_uri(ws, session):
    a, hunks = await propose_two(session, ws)
    await session.command("stet.reject", {"hunkIds": [hunks[0]["id"]]})
    assert [h["id"] for h in await session.hunks(status=["rejected"])] == [hunks[0]["id"]]
    assert [h["id"] for h in await session.hunks(status=["pending"], uri=a)] == [hunks[1]["id"]]
    assert len(await session.hunks(proposalId="p1")) == 2


async def test_error_codes(ws, session, tmp_path):
    a, hunks = await propose_two(session, ws)
    outside = write(tmp_path / "outside.txt", "x\n")
    bad = [
        (
            "stet/propose",
            {"proposalId": "o", "edit": {"changes": {uri(outside): [{"range": rng(0, 0, 0, 0), "newText": "y"}]}}},
            -32003,
        ),
        ("stet/propose", {"proposalId": "o", "edit": {"changes": {"https://x/y": []}}}, -32003),
        ("stet/propose", {"proposalId": "o", "edit": {"changes": {"file://host/etc/passwd": []}}}, -32003),
        ("stet/propose", {"proposalId": "o", "edit": {"changes": {uri(ws) + "/../outside.txt": []}}}, -32003),
        ("stet/propose", {"proposalId": "o", "edit": {"changes": {a: [{"range": "no", "newText": 1}]}}}, -32602),
        ("stet/propose", {"edit": {"changes": {}}}, -32602),
        ("stet/propose", [1, 2], -32602),
        (
            "stet/propose",
            {
                "proposalId": "big",
                "edit": {"changes": {a: [{"range": rng(0, 0, 0, 0), "newText": "x" * (10 * 1024 * 1024 + 1)}]}},
            },
            -32004,
        ),
        ("stet/listHunks", {"status": ["bogus"]}, -32602),
    ]
    for method, params, code in bad:
        with pytest.raises(JsonRpcException) as err:
            await session.request(method, params)
        assert codes(err) == code, (method, params, err.value)
    cmds = [
        ("stet.accept", {"hunkIds": []}, -32602),
        ("stet.accept", {"hunkIds": ["nope"]}, -32001),
        ("stet.accept", {"hunkIds": [hunks[0]["id"], hunks[1]["id"]], "text": "x\n"}, -32602),
        ("stet.reject", {"hunkIds": "h1"}, -32602),
        ("stet.acceptFile", {}, -32602),
        ("stet.acceptFile", {"uri": uri(outside)}, -32003),
        ("stet.accept", None, -32602),
    ]
    for name, params, code in cmds:
        with pytest.raises(JsonRpcException) as err:
            await session.command(name, params)
        assert codes(err) == code, (name, params, err.value)
    with pytest.raises(JsonRpcException):  # two arguments instead of one
        await session.command("stet.accept", raw_args=[{"hunkIds": [hunks[0]["id"]]}, {}])
    with pytest.raises(JsonRpcException):
        await session.command("stet.nonsense", {})
    with pytest.raises(JsonRpcException) as err:
        await session.request("stet/noSuchMethod", {})
    assert codes(err) == -32601
    # Nothing of that changed anything, and the server still answers.
    assert [h["status"] for h in await session.hunks()] == ["pending", "pending"]
    assert read(ws / "a.py") == "".join(A_LINES) and read(outside) == "x\n"


async def test_malformed_standard_request_gets_invalid_params(ws, session):
    # pygls alone would never answer this: the client would wait forever.
    with pytest.raises(JsonRpcException) as err:
        await session.request("textDocument/codeLens", {"textDocument": 5})
    assert codes(err) == -32602
    assert await session.hunks() == []


async def test_version_mismatch_on_open_buffer_is_conflict(ws, session):
    a = session.open(ws / "a.py")
    edit = {
        "documentChanges": [
            {"textDocument": {"uri": a, "version": 7}, "edits": [{"range": rng(0, 0, 0, 0), "newText": "x\n"}]}
        ]
    }
    with pytest.raises(JsonRpcException) as err:
        await session.request("stet/propose", {"proposalId": "v", "edit": edit})
    assert codes(err) == -32002
    edit["documentChanges"][0]["textDocument"]["version"] = 1
    res = await session.request("stet/propose", {"proposalId": "v", "edit": edit})
    assert res["hunks"][0]["newText"] == "x\n"


async def test_base_is_the_open_buffer(ws, session):
    a = session.open(ws / "a.py")
    session.type(a, rng(0, 0, 0, 0), "unsaved top\n")
    res = await session.propose("p", {a: [(rng(1, 0, 2, 0), "FIRST\n")]})
    (h,) = res["hunks"]
    assert h["oldText"] == "line 1\n" and h["range"] == rng(1, 0, 2, 0)


async def test_diagnostics_lenses_actions_hover(ws, session):
    a = session.open(ws / "a.py")
    _, hunks = await propose_two(session, ws)
    diags = await until(
        lambda: len(session.client.diagnostics.get(a, [])) == 2 and session.client.diagnostics[a], "2 diagnostics"
    )
    assert {d.code for d in diags} == {h["id"] for h in hunks}
    assert all(d.source == "stet" and d.severity == types.DiagnosticSeverity.Information for d in diags)
    lenses = await session.request("textDocument/codeLens", {"textDocument": {"uri": a}})
    titles = [(lens["range"]["start"]["line"], lens["command"]["title"], lens["command"]["command"]) for lens in lenses]
    assert (0, "Accept all (2)", "stet.acceptFile") in titles and (0, "Reject all (2)", "stet.rejectFile") in titles
    per_hunk = [t for t in titles if t[2] in ("stet.accept", "stet.reject")]
    assert [(line, cmd) for line, _, cmd in per_hunk] == [
        (1, "stet.accept"),
        (1, "stet.reject"),
        (5, "stet.accept"),
        (5, "stet.reject"),
    ]
    assert all(title.startswith(("Accept", "Reject")) for _, title, _ in titles)
    accept_lens = next(lens for lens in lenses if lens["command"]["command"] == "stet.accept")
    assert accept_lens["command"]["arguments"] == [{"hunkIds": [hunks[0]["id"]]}]
    actions = await session.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": a}, "range": rng(5, 2, 5, 2), "context": {"diagnostics": []}},
    )
    kinds = {(x["kind"], x["command"]["command"]) for x in actions}
    assert ("quickfix", "stet.accept") in kinds and ("quickfix", "stet.reject") in kinds
    assert all(x["command"]["arguments"][0].get("hunkIds") in (None, [hunks[1]["id"]]) for x in actions)
    hover = await session.request(
        "textDocument/hover", {"textDocument": {"uri": a}, "position": {"line": 1, "character": 2}}
    )
    value = hover["contents"]["value"]
    assert "```diff" in value and "-line 2" in value and "+LINE TWO" in value
    assert (
        await session.request(
            "textDocument/hover", {"textDocument": {"uri": a}, "position": {"line": 8, "character": 0}}
        )
        is None
    )
    # Running a lens' command does what it says.
    await session.command(accept_lens["command"]["command"], accept_lens["command"]["arguments"][0])
    lenses = await session.request("textDocument/codeLens", {"textDocument": {"uri": a}})
    assert not any(
        lens["range"]["start"]["line"] == 1 and lens["command"]["command"] == "stet.accept" for lens in lenses
    )


async def test_hunks_changed_notification_carries_the_uri_list(ws, session):
    a, hunks = await propose_two(session, ws)
    await session.command("stet.reject", {"hunkIds": [hunks[0]["id"]]})
    await until(
        lambda: any(c["uri"] == a and status(c["hunks"], hunks[0]["id"]) == "rejected" for c in session.changed),
        "hunksChanged with the rejection",
    )
    last = [c for c in session.changed if c["uri"] == a][-1]
    assert {h["id"]: h["status"] for h in last["hunks"]} == {hunks[0]["id"]: "rejected", hunks[1]["id"]: "pending"}


async def test_typing_above_moves_hunks_and_typing_inside_makes_stale(ws, session):
    a = session.open(ws / "a.py")
    _, hunks = await propose_two(session, ws)
    session.type(a, rng(0, 0, 0, 0), "new first\nnew second\n")
    moved = await session.hunks_until(lambda hs: field(hs, hunks[1]["id"], "range") == rng(7, 0, 8, 0), "hunks moved")
    ranges = {h["id"]: h["range"] for h in moved}
    assert ranges[hunks[0]["id"]] == rng(3, 0, 4, 0) and ranges[hunks[1]["id"]] == rng(7, 0, 8, 0)
    session.type(a, rng(7, 2, 7, 2), "X")  # inside the second hunk's old text
    await session.hunks_until(lambda hs: status(hs, hunks[1]["id"]) == "stale", "the typed-in hunk stale")
    warned = lambda: any(  # noqa: E731
        d.code == hunks[1]["id"] and d.severity == types.DiagnosticSeverity.Warning
        for d in session.client.diagnostics.get(a, [])
    )
    await until(warned, "a warning for the stale hunk")
    with pytest.raises(JsonRpcException) as err:
        await session.command("stet.accept", {"hunkIds": [hunks[1]["id"]]})
    assert codes(err) == -32002
    before = session.text(a)
    assert session.apply_requests == 0 and read(ws / "a.py") == "".join(A_LINES) and "liXne 6" in before
    session.type(a, rng(7, 2, 7, 3), "")  # typed back: found again
    await session.hunks_until(lambda hs: status(hs, hunks[1]["id"]) == "pending", "the hunk found again")
    # The accept now lands at the moved position.
    await session.command("stet.accept", {"hunkIds": [hunks[0]["id"], hunks[1]["id"]]})
    assert session.text(a) == "new first\nnew second\n" + "".join(A_LINES).replace("line 2\n", "LINE TWO\n").replace(
        "line 6\n", "line 6a\nline 6b\n"
    )


async def test_save_checkpoints_and_close_reverts_to_disk_positions(ws, session):
    a = session.open(ws / "a.py")
    _, hunks = await propose_two(session, ws)
    session.type(a, rng(0, 0, 0, 0), "top\n")
    session.close(ws / "a.py")  # discarded: the file on disk never had "top"
    await session.hunks_until(lambda hs: field(hs, hunks[0]["id"], "range") == rng(1, 0, 2, 0), "the disk's position")


async def test_crlf_file_and_no_trailing_newline(ws, session):
    crlf = write(ws / "w.txt", "one\r\ntwo\r\nthree")
    u = uri(crlf)
    res = await session.propose("c", {u: [(rng(1, 0, 1, 3), "TWO\nand more"), (rng(2, 0, 2, 5), "THREE")]})
    (hunk,) = res["hunks"]  # two adjacent changed lines: one hunk
    # The agent's \n became the file's \r\n, as an editor would write it.
    assert hunk["oldText"] == "two\r\nthree" and hunk["newText"] == "TWO\r\nand more\r\nTHREE"
    assert hunk["range"] == rng(1, 0, 2, 5)  # ends at the end of a document without a final newline
    await session.command("stet.acceptFile", {"uri": u})
    assert read(crlf) == "one\r\nTWO\r\nand more\r\nTHREE"


async def test_utf16_columns(ws, session):
    f = write(ws / "u.txt", "a😀b\nsecond\n")
    u = uri(f)
    # Column 3 is after the surrogate pair (a=1, 😀=2 units): insert before "b".
    res = await session.propose("u", {u: [(rng(0, 3, 0, 3), "Z")]})
    assert res["hunks"][0]["newText"] == "a😀Zb\n"
    await session.command("stet.accept", {"hunkIds": [res["hunks"][0]["id"]]})
    assert read(f) == "a😀Zb\nsecond\n"


async def test_empty_file(ws, session):
    f = write(ws / "empty.txt", "")
    u = uri(f)
    res = await session.propose("e", {u: [(rng(0, 0, 0, 0), "hello\n")]})
    (h,) = res["hunks"]
    assert h["oldText"] == "" and h["range"] == rng(0, 0, 0, 0)
    await session.command("stet.accept", {"hunkIds": [h["id"]]})
    assert read(f) == "hello\n"


async def test_store_layout_and_modes(ws, session, engine):
    # The checkout's own folder either way: private, ignored by git; the database file only for SQLite.
    assert stat.S_IMODE(os.stat(ws / ".stet").st_mode) == 0o700
    assert (ws / ".stet" / ".gitignore").read_text() == "*\n"
    db = ws / ".stet" / "stet.db"
    if engine.pg:
        assert not db.exists()
    else:
        assert stat.S_IMODE(os.stat(db).st_mode) == 0o600


async def test_execute_command_provider_lists_every_command(ws):
    s = Session(ws)
    await s.start()
    try:
        result = s.init_result.capabilities
        commands = set(result.execute_command_provider.commands)
        assert commands >= {
            "stet.accept",
            "stet.reject",
            "stet.undo",
            "stet.acceptFile",
            "stet.rejectFile",
            "stet.acceptAll",
            "stet.rejectAll",
        }
        assert result.position_encoding in (None, types.PositionEncodingKind.Utf16)
    finally:
        await s.stop()
