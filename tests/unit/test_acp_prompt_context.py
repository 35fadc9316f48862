"""What the agent is told through ACP: the open review at the first prompt of a new or loaded
session, then the developer's decisions since it was last told, each once, as one text block
appended to the prompt (at most 4,000 characters, agent-written text made inert); nothing to
tell: the prompt goes on as it came."""

from stet.acp.message import FORWARD, Rewrite
from support.acp_part import Peers, hunks, make_store, msg
from support.calls import stet_in

TEXT = "".join(f"line {i}\n" for i in range(1, 11))


async def _ready(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(TEXT)
    await make_store(root)
    peers = Peers(root)
    await peers.start()
    return root, peers


def _block(verdict, asked="do it") -> str:
    assert isinstance(verdict, Rewrite)
    params = verdict.body["params"]
    assert verdict.body["method"] == "session/prompt" and verdict.body["jsonrpc"] == "2.0"
    assert params["prompt"][0] == {"type": "text", "text": asked} and len(params["prompt"]) == 2
    block = params["prompt"][1]
    assert block["type"] == "text" and len(block["text"]) <= 4000
    return block["text"]


async def test_nothing_to_tell_leaves_the_prompt_as_it_came(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.new_session("S-1")
        assert await peers.prompt("S-1") is FORWARD
        assert await peers.prompt("S-1") is FORWARD
    finally:
        await peers.part.close()


async def test_a_new_session_is_told_the_open_review_at_its_first_prompt_only(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.new_session("S-1")
        await peers.edit("S-1", "t1", root / "a.py", "line 2", "TWO")
        await peers.new_session("S-2")
        text = _block(await peers.prompt("S-2"))
        assert text.startswith("Stet: the developer's review of your changes") and "pending review: a.py line 2" in text
        assert await peers.prompt("S-2") is FORWARD
        # A session loaded again is told again.
        await peers.load_session("S-2")
        assert "pending review: a.py line 2" in _block(await peers.prompt("S-2"))
    finally:
        await peers.part.close()


async def test_each_decision_is_told_once_at_the_next_prompt(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.new_session("S-1")
        await peers.prompt("S-1")
        await peers.edit("S-1", "t1", root / "a.py", "line 2", "TWO")
        await peers.edit("S-1", "t2", root / "a.py", "line 9", "NINE")
        assert await peers.prompt("S-1") is FORWARD
        by_text = {h["newText"]: h["id"] for h in await hunks(root)}
        assert (await stet_in(["accept", by_text["TWO\n"]], root)).code == 0
        text = _block(await peers.prompt("S-1"))
        assert "accepted: a.py line 2" in text and "line 9" not in text
        assert await peers.prompt("S-1") is FORWARD
        assert (await stet_in(["reject", by_text["NINE\n"], "--feedback", "no\x1b[31m capitals"], root)).code == 0
        text = _block(await peers.prompt("S-1"))
        assert "REJECTED a.py line 9" in text and "\x1b" not in text and "no\\x1b[31m capitals" in text
        assert await peers.prompt("S-1") is FORWARD
    finally:
        await peers.part.close()


async def test_the_block_is_bounded_and_the_rest_of_the_request_untouched(tmp_path):
    root, peers = await _ready(tmp_path)
    big = root / "big.py"
    big.write_text("".join(f"row {i}\n" for i in range(800)))
    try:
        await peers.new_session("S-1")
        after = "".join(f"ROW {i}\n" if i % 4 == 0 else f"row {i}\n" for i in range(800))
        await peers.write("S-1", big, after)
        assert len(await hunks(root)) == 200
        await peers.new_session("S-2")
        body = {
            "jsonrpc": "2.0",
            "id": 77,
            "method": "session/prompt",
            "params": {"sessionId": "S-2", "prompt": [{"type": "text", "text": "go"}], "_meta": {"x": 1}},
            "extra": [1, 2],
        }
        verdict = await peers.part.from_editor(msg(body), None)
        text = _block(verdict, "go")
        assert "more (run `stet status` for the rest)" in text
        assert {k: v for k, v in verdict.body.items() if k != "params"} == {
            k: v for k, v in body.items() if k != "params"
        }
        assert verdict.body["params"]["_meta"] == {"x": 1} and verdict.body["params"]["sessionId"] == "S-2"
    finally:
        await peers.part.close()


async def test_another_protocol_version_passes_through_untouched(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(TEXT)
    await make_store(root)
    peers = Peers(root)
    try:
        i, _ = await peers.editor_asks("initialize", {"protocolVersion": 3, "clientCapabilities": {}})
        await peers.agent_answers(i, {"protocolVersion": 3})
        await peers.new_session("S-1")
        assert await peers.tool_call("S-1", "t", root / "a.py", "line 2", "TWO") is FORWARD
        assert await hunks(root) == []
    finally:
        await peers.part.close()
