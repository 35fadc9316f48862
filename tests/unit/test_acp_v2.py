"""Stet's ACP part when the peers agree protocol version 2 (the draft published July 2026): the
same record, refusals and telling as in v1, read from v2's shapes.

The messages are written from v2's schema (schema/v2/schema.json of
agentclientprotocol/agent-client-protocol, 2.0.0-alpha.3) and its pages:
https://agentclientprotocol.com/protocol/v2/migration (what changed from v1),
https://agentclientprotocol.com/protocol/v2/tool-calls (tool calls are `tool_call_update` upserts
patched by id, `tool_call_content_chunk` appends one item; a diff is `changes` + a `git_patch`;
a permission request has a `title` and a `subject` of type `tool_call`; options and outcomes as
in v1), /protocol/v2/prompt-lifecycle (`session/prompt` unchanged, its answer `{}` only
acknowledges; the turn ends with an idle `state_update`) and /protocol/v2/session-setup
(`session/new`, `session/resume` with `replayFrom` instead of `session/load`; no `fs/*`)."""

import logging

import pytest

from stet.acp.message import FORWARD, Reply, Rewrite
from support.acp_part import PeersV2, hunks, make_store, msg, v2_diff
from support.calls import stet_in

TEXT = "".join(f"line {i}\n" for i in range(1, 11))


async def _ready(tmp_path, sid="S-1", **kw):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(TEXT)
    await make_store(root)
    peers = PeersV2(root, **kw)
    await peers.start()
    await peers.new_session(sid)
    return root, peers


def _added(verdict, asked="do it") -> str:
    assert isinstance(verdict, Rewrite)
    prompt = verdict.body["params"]["prompt"]
    assert prompt[0] == {"type": "text", "text": asked} and len(prompt) == 2
    assert prompt[1]["type"] == "text" and len(prompt[1]["text"]) <= 4000
    return prompt[1]["text"]


async def test_a_tool_calls_diff_is_a_kept_hunk_before_it_goes_on_named_from_info(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    after = TEXT.replace("line 3", "LINE THREE")
    try:
        assert peers.part.agent == "coder"  # v2's `info.name`, scope stripped
        await peers.prompt("S-1", "shout line three")
        update = {"title": "Edit a.py", "kind": "edit", "status": "pending", "content": [v2_diff(path, TEXT, after)]}
        assert await peers.upsert("S-1", "t1", **update) is FORWARD
        [h] = await hunks(root)
        assert path.read_text() == TEXT  # recorded before the editor saw it, nothing written
        assert (h["status"], h["kept"], h["taskId"], h["agent"]) == ("pending", True, "acp-coder-S-1", "coder")
        assert (h["oldText"], h["newText"]) == ("line 3\n", "LINE THREE\n")
        assert "shout line three" in h["message"]
        # v2 has no client file system: the agent writes the file itself, then patches the call.
        path.write_text(after)
        assert await peers.upsert("S-1", "t1", status="completed") is FORWARD
        assert await peers.idle("S-1") is FORWARD
        [again] = await hunks(root)
        assert (again["id"], again["status"], again["inFile"]) == (h["id"], "pending", True)
    finally:
        await peers.part.close()


async def test_a_diff_in_a_later_patch_or_a_content_chunk_is_merged_by_id_and_recorded_once(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    after = TEXT.replace("line 5", "FIVE")
    try:
        assert await peers.upsert("S-1", "t1", title="Edit a.py", kind="edit", status="pending") is FORWARD
        assert await peers.upsert("S-1", "t1", status="in_progress") is FORWARD
        assert await hunks(root) == []
        path.write_text(after)  # made before it is reported: the patch applies backwards
        assert await peers.upsert("S-1", "t1", status="completed") is FORWARD
        assert await peers.chunk("S-1", "t1", v2_diff(path, TEXT, after)) is FORWARD
        [h] = await hunks(root)
        assert (h["status"], h["kept"], h["inFile"], h["newText"]) == ("pending", True, True, "FIVE\n")
        # The same change again: the whole content replaced, then another chunk.
        assert await peers.upsert("S-1", "t1", content=[v2_diff(path, TEXT, after)]) is FORWARD
        assert await peers.chunk("S-1", "t1", {"type": "content", "content": {"type": "text", "text": "ok"}}) is FORWARD
        assert await peers.upsert("S-1", "t1", content=None) is FORWARD  # null clears: nothing to record
        assert [x["id"] for x in await hunks(root)] == [h["id"]]
    finally:
        await peers.part.close()


async def test_a_new_file_is_recorded_and_what_v2_cannot_say_as_text_passes_said_once(tmp_path, caplog):
    root, peers = await _ready(tmp_path)
    new = root / "b.py"
    try:
        assert await peers.upsert("S-1", "n1", status="pending", content=[v2_diff(new, None, "y = 1\n")]) is FORWARD
        [h] = await hunks(root)
        assert (h["status"], h["kept"], h["newText"], new.exists()) == ("pending", True, "y = 1\n", False)
        gone = {"type": "diff", "changes": [{"operation": "delete", "path": str(root / "a.py"), "fileType": "text"}]}
        bare = v2_diff(root / "a.py", TEXT, TEXT.replace("line 1\n", "ONE\n"), patch=False)
        moved = {
            "type": "diff",
            "changes": [{"operation": "move", "oldPath": str(root / "a.py"), "path": str(root / "c.py")}],
        }
        odd = {"type": "diff", "changes": "nope", "patch": {"format": "_svn", "text": "?"}}
        with caplog.at_level(logging.WARNING):
            for tcid, item in (("d1", gone), ("d2", bare), ("d3", moved), ("d4", odd), ("d5", bare)):
                assert await peers.upsert("S-1", tcid, status="pending", content=[item]) is FORWARD
        assert [x["id"] for x in await hunks(root)] == [h["id"]]
        assert "a.py" in caplog.text and "not recorded" in caplog.text
        assert caplog.text.count("without a text patch") == 1
    finally:
        await peers.part.close()


async def test_a_refused_or_cancelled_permission_rejects_the_change(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    try:
        verdicts = await peers.edit("S-1", "t1", path, TEXT, TEXT.replace("line 4", "FOUR"), allow=False)
        assert all(v is FORWARD for v in verdicts)
        [h] = await hunks(root)
        assert (h["status"], h["feedback"], path.read_text()) == ("rejected", None, TEXT)
        await peers.upsert("S-1", "t2", status="pending", content=[v2_diff(path, TEXT, TEXT.replace("line 8", "8"))])
        i, _ = await peers.permission("S-1", "t2")
        assert await peers.editor_answers(i, {"outcome": {"outcome": "cancelled"}}) is FORWARD
        assert sorted(x["status"] for x in await hunks(root)) == ["rejected", "rejected"]
        assert await peers.prompt("S-1") is FORWARD  # the editor told it already
    finally:
        await peers.part.close()


@pytest.mark.parametrize("ended", ["failed", "cancelled"])
async def test_a_tool_call_that_ends_without_its_change_is_withdrawn(tmp_path, ended):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    try:
        await peers.upsert("S-1", "t1", status="pending", content=[v2_diff(path, TEXT, TEXT.replace("line 6", "SIX"))])
        assert await peers.upsert("S-1", "t1", status=ended) is FORWARD
        assert [x["status"] for x in await hunks(root)] == ["superseded"]
    finally:
        await peers.part.close()


async def test_the_redo_of_a_rejected_change_is_refused_with_the_reject_option_and_told(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    after = TEXT.replace("line 3", "THREE")
    try:
        await peers.prompt("S-1")
        await peers.edit("S-1", "t1", path, TEXT, after)
        [h] = await hunks(root)
        ran = await stet_in(["reject", h["id"], "--feedback", "keep it lower case"], root)
        assert ran.code == 0, ran.err
        assert path.read_text() == TEXT
        assert "keep it lower case" in _added(await peers.prompt("S-1"))
        verdicts = await peers.edit("S-1", "t2", path, TEXT, after)
        reply = verdicts[-1]
        assert isinstance(reply, Reply)
        assert reply.body["result"] == {"outcome": {"outcome": "selected", "optionId": "reject-once"}}
        assert reply.body["id"] > 1000 and reply.body["jsonrpc"] == "2.0"
        told = _added(await peers.prompt("S-1"))
        assert "keep it lower case" in told and "do not make it again" in told
        assert await peers.prompt("S-1") is FORWARD
        # A diff shown only in the request's subject, options without reject_once: the same.
        subject = [v2_diff(path, TEXT, after)]
        options = [
            {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
            {"optionId": "never", "name": "Never", "kind": "reject_always"},
        ]
        _, verdict = await peers.permission("S-1", "x1", options=options, content=subject)
        assert isinstance(verdict, Reply) and verdict.body["result"]["outcome"]["optionId"] == "never"
    finally:
        await peers.part.close()


async def test_a_command_permission_or_one_without_a_subject_goes_on(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        base = {
            "sessionId": "S-1",
            "title": "Run it?",
            "options": [{"optionId": "r", "name": "No", "kind": "reject_once"}],
        }
        command = {"type": "command", "command": "make", "cwd": str(root), "toolCallId": "t1"}
        for params in (base, {**base, "subject": command}, {**base, "subject": {"type": "_acme", "x": 1}}):
            i, verdict = await peers.agent_asks("session/request_permission", params)
            assert verdict is FORWARD
            assert await peers.editor_answers(i, {"outcome": {"outcome": "selected", "optionId": "r"}}) is FORWARD
        assert await hunks(root) == []
    finally:
        await peers.part.close()


async def test_the_open_review_at_the_first_prompt_of_a_new_or_resumed_session(tmp_path):
    root, peers = await _ready(tmp_path)
    path = root / "a.py"
    try:
        assert await peers.prompt("S-1") is FORWARD  # nothing open yet
        await peers.upsert("S-1", "t1", status="pending", content=[v2_diff(path, TEXT, TEXT.replace("line 2", "2"))])
        await peers.new_session("S-2")
        block = _added(await peers.prompt("S-2"))
        assert "a.py" in block
        # S-1 resumed with its history replayed before the answer: the replay is history, not news.
        path.write_text(TEXT.replace("line 9", "NINE"))
        replayed = {
            "sessionId": "S-1",
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "old",
                "status": "completed",
                "content": [v2_diff(path, TEXT, TEXT.replace("line 9", "NINE"))],
            },
        }
        assert await peers.resume_session("S-1", replay=[replayed]) == [FORWARD]
        assert [x["newText"] for x in await hunks(root)] == ["2\n"]
        assert "a.py" in _added(await peers.prompt("S-1"))
        assert await peers.prompt("S-1") is FORWARD
        await peers.resume_session("S-1", replay_from=False)  # reattached: its first prompt again
        assert "a.py" in _added(await peers.prompt("S-1"))
    finally:
        await peers.part.close()


async def test_the_prompt_answer_and_idle_state_pass_byte_for_byte(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        body = {"jsonrpc": "2.0", "id": 7, "result": {}}
        asked = msg(
            {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "S-1", "prompt": []}}
        )
        assert await peers.part.from_agent(msg(body), asked) is FORWARD
        assert await peers.idle("S-1") is FORWARD
        # v1's client file system is gone in v2: a write asked anyway is not Stet's to record.
        _, verdict = await peers.agent_asks(
            "fs/write_text_file", {"sessionId": "S-1", "path": str(root / "a.py"), "content": "z\n"}
        )
        assert verdict is FORWARD and await hunks(root) == []
    finally:
        await peers.part.close()


@pytest.mark.parametrize("version", [0, 3, "2"])
async def test_any_other_version_passes_through_said_once(tmp_path, caplog, version):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(TEXT)
    await make_store(root)
    peers = PeersV2(root)
    try:
        i, _ = await peers.editor_asks(
            "initialize", {"protocolVersion": version, "info": {"name": "e", "version": "1"}}
        )
        await peers.agent_answers(i, {"protocolVersion": version, "info": {"name": "x", "version": "1"}})
        with caplog.at_level(logging.WARNING):
            await peers.new_session("S-1")
            diff = [v2_diff(root / "a.py", TEXT, TEXT.replace("line 2", "TWO"))]
            assert await peers.upsert("S-1", "t", status="pending", content=diff) is FORWARD
            assert await peers.prompt("S-1") is FORWARD
        assert await hunks(root) == []
        assert caplog.text.count("passes this connection through") == 1
    finally:
        await peers.part.close()


async def test_malformed_v2_messages_go_on_untouched(tmp_path):
    root, peers = await _ready(tmp_path)
    path = str(root / "a.py")
    try:
        odd = [
            {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": []},
            {"sessionUpdate": "tool_call_update", "toolCallId": ["t"], "status": "failed"},
            {"sessionUpdate": ["tool_call_update"], "toolCallId": "t"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [{"type": "diff"}]},
            {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [{"type": "diff", "changes": [7]}]},
            {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": [{"type": "diff"}]},
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "t",
                "content": {
                    "type": "diff",
                    "changes": [{"operation": "modify", "path": path}],
                    "patch": {"format": "git_patch", "text": f"diff --git {path} {path}\n@@ nonsense\n"},
                },
            },
        ]
        for update in odd:
            assert await peers.agent_tells({"sessionId": "S-1", "update": update}) is FORWARD
        _, verdict = await peers.agent_asks(
            "session/request_permission", {"sessionId": "S-1", "subject": {"type": "tool_call", "toolCall": 3}}
        )
        assert verdict is FORWARD and await hunks(root) == []
        assert (root / "a.py").read_text() == TEXT
    finally:
        await peers.part.close()
