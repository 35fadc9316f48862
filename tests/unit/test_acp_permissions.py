"""What the editor answers decides what the record says: a refused permission rejects the change
it asked for, a failed write or tool call withdraws it; and a permission for a change the
developer rejected is refused on their behalf, the agent told why at its next prompt, once."""

from stet.acp.message import FORWARD, Reply, Rewrite
from support.acp_part import OPTIONS, Peers, hunks, make_store
from support.calls import stet_in

TEXT = "".join(f"line {i}\n" for i in range(1, 11))


async def _ready(tmp_path, sid="S-1"):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(TEXT)
    await make_store(root)
    peers = Peers(root)
    await peers.start()
    await peers.new_session(sid)
    return root, peers


def _added(verdict) -> str:
    assert isinstance(verdict, Rewrite)
    prompt = verdict.body["params"]["prompt"]
    assert prompt[0] == {"type": "text", "text": "do it"} and len(prompt) == 2
    return prompt[1]["text"]


async def test_a_refused_permission_rejects_the_change_and_is_not_told_again(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.prompt("S-1")
        verdicts = await peers.edit("S-1", "t1", root / "a.py", "line 4", "FOUR", allow=False)
        assert all(v is FORWARD for v in verdicts)
        [h] = await hunks(root)
        assert (h["status"], h["feedback"]) == ("rejected", None)
        assert (root / "a.py").read_text() == TEXT
        assert await peers.prompt("S-1") is FORWARD  # the editor told it already
    finally:
        await peers.part.close()


async def test_a_cancelled_permission_rejects_the_change(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.tool_call("S-1", "t1", root / "a.py", "line 4", "FOUR")
        i, _ = await peers.permission("S-1", "t1")
        assert await peers.editor_answers(i, {"outcome": {"outcome": "cancelled"}}) is FORWARD
        assert [h["status"] for h in await hunks(root)] == ["rejected"]
    finally:
        await peers.part.close()


async def test_a_write_the_editor_failed_is_withdrawn_and_can_be_made_again(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    after = TEXT.replace("line 6", "SIX")
    try:
        await peers.tool_call("S-1", "t1", path, "line 6", "SIX")
        assert await peers.write("S-1", path, after, error={"code": -32603, "message": "disk full"}) is FORWARD
        [h] = await hunks(root)
        assert h["status"] == "superseded" and path.read_text() == TEXT
        assert await peers.prompt("S-1") is not None
        # Tried again: recorded anew, and not refused as a redo (nobody rejected it).
        i, verdict = await peers.permission("S-1", "t1")
        assert verdict is FORWARD
        await peers.write("S-1", path, after)
        live = [h for h in await hunks(root) if h["status"] == "pending"]
        assert [(x["newText"], x["inFile"]) for x in live] == [("SIX\n", True)]
    finally:
        await peers.part.close()


async def test_a_failed_tool_call_whose_change_is_not_in_the_file_is_withdrawn(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    try:
        await peers.tool_call("S-1", "t1", path, "line 6", "SIX")
        await peers.tool_call("S-1", "t2", path, "line 7", "SEVEN")
        path.write_text(TEXT.replace("line 7", "SEVEN"))  # t2's change made, t1's not
        failed = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"}
        assert await peers.agent_tells({"sessionId": "S-1", "update": failed}) is FORWARD
        failed["toolCallId"] = "t2"
        await peers.agent_tells({"sessionId": "S-1", "update": failed})
        status = {h["newText"]: h["status"] for h in await hunks(root)}
        assert status == {"SIX\n": "superseded", "SEVEN\n": "pending"}
    finally:
        await peers.part.close()


async def _rejected_with_feedback(root, peers, sid="S-1"):
    await peers.edit(sid, "t1", root / "a.py", "line 3", "THREE")
    [h] = [h for h in await hunks(root) if h["newText"] == "THREE\n"]
    ran = await stet_in(["reject", h["id"], "--feedback", "keep it lower case\nplease"], root)
    assert ran.code == 0, ran.err
    assert (root / "a.py").read_text() == TEXT
    return h


async def test_the_redo_of_a_rejected_change_is_refused_and_the_agent_told_once(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.prompt("S-1")
        await _rejected_with_feedback(root, peers)
        told = _added(await peers.prompt("S-1"))
        assert "REJECTED a.py line 3: keep it lower case please" in told
        assert await peers.prompt("S-1") is FORWARD
        # The same change again, in another tool call: refused for the developer.
        verdicts = await peers.edit("S-1", "t2", root / "a.py", "line 3", "THREE")
        reply = verdicts[-1]
        assert isinstance(reply, Reply)
        assert reply.body["result"] == {"outcome": {"outcome": "selected", "optionId": "reject"}}
        assert reply.body["id"] > 1000 and reply.body["jsonrpc"] == "2.0"
        assert (root / "a.py").read_text() == TEXT
        told = _added(await peers.prompt("S-1"))
        assert "keep it lower case please" in told and "do not make it again" in told
        assert await peers.prompt("S-1") is FORWARD
    finally:
        await peers.part.close()


async def test_a_redo_in_another_session_rejects_its_own_hunks_with_the_feedback(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await _rejected_with_feedback(root, peers)
        await peers.new_session("S-2")
        await peers.prompt("S-2")
        await peers.tool_call("S-2", "u1", root / "a.py", "line 3", "THREE")
        i, verdict = await peers.permission(
            "S-2",
            "u1",
            options=[o for o in OPTIONS if o["kind"] != "reject_once"]
            + [{"optionId": "never", "name": "Never", "kind": "reject_always"}],
        )
        assert isinstance(verdict, Reply) and verdict.body["result"]["outcome"]["optionId"] == "never"
        mine = [h for h in await hunks(root) if h["taskId"] == "acp-claude-code-acp-S-2"]
        assert [(h["status"], h["feedback"]) for h in mine] == [("rejected", "keep it lower case\nplease")]
        told = _added(await peers.prompt("S-2"))
        assert "keep it lower case please" in told
        assert await peers.prompt("S-2") is FORWARD
    finally:
        await peers.part.close()


async def test_a_redo_with_its_diff_in_the_request_and_no_reject_option(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await _rejected_with_feedback(root, peers)
        diff = [{"type": "diff", "path": str(root / "a.py"), "oldText": "line 3", "newText": "THREE"}]
        _, verdict = await peers.permission("S-1", "x1", content=diff)
        assert isinstance(verdict, Reply)
        allow_only = [o for o in OPTIONS if not o["kind"].startswith("reject")]
        _, verdict = await peers.permission("S-1", "x2", options=allow_only, content=diff)
        assert verdict is FORWARD
        # Another change in the same file is no redo.
        other = [{"type": "diff", "path": str(root / "a.py"), "oldText": "line 5", "newText": "FIVE"}]
        _, verdict = await peers.permission("S-1", "x3", content=other)
        assert verdict is FORWARD
    finally:
        await peers.part.close()


async def test_a_change_refused_in_the_editor_is_asked_again_not_refused_by_stet(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.edit("S-1", "t1", root / "a.py", "line 4", "FOUR", allow=False)
        verdicts = await peers.edit("S-1", "t2", root / "a.py", "line 4", "FOUR")
        assert all(v is FORWARD for v in verdicts)
        # The record is the truth: the refused proposal rejected, the allowed one pending, in the file.
        assert (root / "a.py").read_text() == TEXT.replace("line 4", "FOUR")
        status = sorted((h["status"], h["newText"], h["inFile"]) for h in await hunks(root))
        assert status == [("pending", "FOUR\n", True), ("rejected", "FOUR\n", None)], status
    finally:
        await peers.part.close()


async def test_a_whole_file_diff_refused_in_the_editor_then_allowed_is_recorded_as_it_happened(tmp_path):
    """Gemini CLI's way (tests/fixtures/acp/gemini.jsonl): the whole-file diff only in the permission
    request; refused by the editor, it is rejected (no failed update follows); the same change in
    the next call, allowed, is a new pending hunk, the one the write and the completed update
    report again."""
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    after = TEXT.replace("line 4", "FOUR")
    whole = [{"type": "diff", "path": str(path), "oldText": TEXT, "newText": after, "_meta": {"kind": "modify"}}]
    try:
        i, verdict = await peers.permission("S-1", "replace-1", content=whole)
        assert verdict is FORWARD
        [h] = await hunks(root)
        assert (h["status"], h["kept"], h["oldText"], h["newText"]) == ("pending", True, "line 4\n", "FOUR\n")
        assert path.read_text() == TEXT
        await peers.editor_answers(i, {"outcome": {"outcome": "selected", "optionId": "reject"}})
        assert [x["status"] for x in await hunks(root)] == ["rejected"]

        i, verdict = await peers.permission("S-1", "replace-2", content=whole)
        assert verdict is FORWARD  # refused in the editor, not by the developer's review: asked again
        await peers.editor_answers(i, {"outcome": {"outcome": "selected", "optionId": "allow"}})
        assert await peers.write("S-1", path, after) is FORWARD
        await peers.tool_call("S-1", "replace-2", path, TEXT, after, kind="tool_call_update", status="completed")
        live = [x for x in await hunks(root) if x["status"] == "pending"]
        assert [(x["newText"], x["inFile"]) for x in live] == [("FOUR\n", True)]
    finally:
        await peers.part.close()


async def test_a_diff_first_shown_in_a_permission_request_is_recorded_before_it_goes_on(tmp_path):
    # Gemini CLI shows a change first in its permission request, then (allowed) writes the file
    # itself and reports the tool call completed with the same diff: one hunk, recorded first.
    root, peers = await _ready(tmp_path)
    try:
        path = root / "a.py"
        diff = [{"type": "diff", "path": str(path), "oldText": TEXT, "newText": TEXT.replace("line 4", "FOUR")}]
        i, verdict = await peers.permission("S-1", "g1", content=diff)
        assert verdict is FORWARD
        [h] = await hunks(root)
        assert (h["status"], h["kept"], h["newText"], path.read_text()) == ("pending", True, "FOUR\n", TEXT)
        await peers.editor_answers(i, {"outcome": {"outcome": "selected", "optionId": "allow"}})
        path.write_text(TEXT.replace("line 4", "FOUR"))
        await peers.tool_call(
            "S-1", "g1", path, TEXT, TEXT.replace("line 4", "FOUR"), kind="tool_call_update", status="completed"
        )
    finally:
        await peers.part.close()
    [h] = await hunks(root)
    assert (h["status"], h["inFile"]) == ("pending", True)


async def test_a_rejected_change_written_again_without_asking_is_pending_again(tmp_path):
    # An agent allowed to edit without asking (allow always, accept-edits, yolo) makes a change
    # the developer rejected once more: no permission to refuse, the editor writes it. The
    # review says what is in the file: a new pending kept hunk, not "rejected, nothing open".
    root, peers = await _ready(tmp_path)
    try:
        first = await _rejected_with_feedback(root, peers)
        await peers.tool_call("S-1", "t2", root / "a.py", "line 3", "THREE")
        assert await peers.write("S-1", root / "a.py", TEXT.replace("line 3\n", "THREE\n")) is FORWARD
        await peers.tool_call(
            "S-1", "t2", root / "a.py", "line 3", "THREE", kind="tool_call_update", status="completed"
        )
        # Reported again after a restart (the same messages): nothing doubled.
        await peers.tool_call("S-1", "t2", root / "a.py", "line 3", "THREE")
    finally:
        await peers.part.close()
    states = sorted((h["status"], h["id"] == first["id"], h.get("inFile")) for h in await hunks(root, "--all"))
    assert states == [("pending", False, True), ("rejected", True, None)]
