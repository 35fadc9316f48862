"""Stet's ACP part records every proposed change as kept hunks of the session's task before the
message goes on: once for the three ways Claude Code's adapter reports one Edit, nothing for
what it does not review, and the record follows the file as the editor writes it."""

import json
import logging

from stet.acp.message import FORWARD
from stet.acp.review_part import name_from_command
from stet.domain.status import Status
from stet.review import open_review
from support.acp_part import Peers, hunks, make_store, msg, status
from support.calls import stet_in

TEXT = "".join(f"line {i}\n" for i in range(1, 11))


async def _ready(tmp_path, **kw):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(TEXT)
    await make_store(root)
    peers = Peers(root, **kw)
    await peers.start()
    await peers.new_session("S-1")
    return root, peers


async def test_one_edit_reported_three_times_is_one_kept_hunk_recorded_before_it_goes_on(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        path = root / "a.py"
        assert await peers.tool_call("S-1", "t1", path, "line 3", "LINE THREE") is FORWARD
        # Durable before the editor sees it: another process reads it from the store, the
        # file still as it was.
        [h] = await hunks(root)
        assert path.read_text() == TEXT
        assert (h["status"], h["kept"], h["taskId"], h["agent"]) == (
            "pending",
            True,
            "acp-claude-code-acp-S-1",
            "claude-code-acp",
        )
        assert (h["oldText"], h["newText"]) == ("line 3\n", "LINE THREE\n")
        i, verdict = await peers.permission("S-1", "t1")
        assert verdict is FORWARD
        await peers.editor_answers(i, {"outcome": {"outcome": "selected", "optionId": "allow"}})
        after = TEXT.replace("line 3", "LINE THREE")
        assert await peers.write("S-1", path, after) is FORWARD
        ctx = "line 2\nLINE THREE\nline 4\n"
        assert (
            await peers.tool_call(
                "S-1", "t1", path, ctx.replace("LINE THREE", "line 3"), ctx, kind="tool_call_update", status="completed"
            )
            is FORWARD
        )
        [again] = await hunks(root)
        assert again["id"] == h["id"] and again["status"] == "pending" and again["kept"] and again["inFile"] is True
        assert path.read_text() == after
    finally:
        await peers.part.close()


async def test_each_edit_of_a_session_adds_its_own_hunks_and_keeps_the_earlier(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        path = root / "a.py"
        await peers.edit("S-1", "t1", path, "line 2", "LINE 2")
        await peers.edit("S-1", "t2", path, "line 8", "LINE 8")
        hs = await hunks(root)
        assert sorted(h["newText"] for h in hs) == ["LINE 2\n", "LINE 8\n"]
        assert all(h["status"] == "pending" and h["kept"] and h["inFile"] for h in hs)
    finally:
        await peers.part.close()


async def test_accepting_keeps_the_file_and_rejecting_reverts_it(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        a, b = root / "a.py", root / "b.py"
        b.write_text("alpha\nbeta\n")
        await peers.edit("S-1", "t1", a, "line 5", "FIVE")
        await peers.edit("S-1", "t2", b, "beta", "BETA")
        by_file = {h["uri"].rsplit("/", 1)[1]: h for h in await hunks(root)}
        assert by_file["a.py"]["inFile"] is True and by_file["b.py"]["inFile"] is True
        review = (await open_review([str(root)], str(root / ".stet" / "stet.db"), create=False)).review
        try:
            seen = [review.hunks[by_file[n]["id"]] for n in ("a.py", "b.py")]
            assert [(h.status, h.kept, h.in_file) for h in seen] == [(Status.PENDING, True, True)] * 2
        finally:
            await review.close()
        ran = await stet_in(["accept", by_file["a.py"]["id"]], root)
        assert ran.code == 0, ran.err
        ran = await stet_in(["reject", by_file["b.py"]["id"]], root)
        assert ran.code == 0, ran.err
        assert a.read_text() == TEXT.replace("line 5", "FIVE")
        assert b.read_text() == "alpha\nbeta\n"
        after = {h["uri"].rsplit("/", 1)[1]: h["status"] for h in await hunks(root)}
        assert after == {"a.py": "applied", "b.py": "rejected"}
        assert await peers.prompt("S-1") is not FORWARD  # the agent is told both
    finally:
        await peers.part.close()


async def test_whole_file_diffs_and_new_files(tmp_path):
    root, peers = await _ready(tmp_path, argv=["gemini", "--experimental-acp"])
    try:
        path = root / "a.py"
        after = TEXT.replace("line 1\n", "first\n")
        await peers.tool_call("S-1", "g1", path, TEXT, after)
        await peers.tool_call("S-1", "g2", root / "new.py", None, "print(1)\n")
        hs = {h["uri"].rsplit("/", 1)[1]: h for h in await hunks(root)}
        assert set(hs) == {"a.py", "new.py"}
        assert hs["a.py"]["newText"] == "first\n" and hs["new.py"]["kind"] == "create"
        # The agent named itself: its name, not the command's.
        assert hs["a.py"]["agent"] == "claude-code-acp"
    finally:
        await peers.part.close()


async def test_a_snippet_found_twice_waits_for_the_write(tmp_path, caplog):
    root, peers = await _ready(tmp_path)
    try:
        path = root / "a.py"
        path.write_text("x = 1\nx = 1\n")
        with caplog.at_level(logging.WARNING):
            await peers.tool_call("S-1", "t1", path, "x = 1", "x = 2")
        assert await hunks(root) == []
        assert "found 2 times" in caplog.text
        await peers.write("S-1", path, "x = 2\nx = 1\n")
        [h] = await hunks(root)
        assert (h["oldText"], h["newText"], h["inFile"]) == ("x = 1\n", "x = 2\n", True)
    finally:
        await peers.part.close()


async def test_what_stet_does_not_review_goes_on_unrecorded_and_is_said_once(tmp_path, caplog):
    root, peers = await _ready(tmp_path)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("a\n")
    (root / ".git").mkdir()
    (root / "big.txt").write_text("")
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(2):
                assert await peers.tool_call("S-1", "o", outside, None, "b\n") is FORWARD
            assert await peers.tool_call("S-1", "g", root / ".git" / "config", None, "x\n") is FORWARD
            assert await peers.tool_call("S-1", "s", root / ".stet" / "x", None, "x\n") is FORWARD
            assert await peers.tool_call("S-1", "n", root / "nul.bin", None, "a\x00b") is FORWARD
            assert await peers.tool_call("S-1", "h", root / "big.txt", None, "x" * (60 << 20)) is FORWARD
            assert await peers.write("S-1", outside, "c\n", editor_writes=False) is FORWARD
        assert await hunks(root) == []
        assert caplog.text.count("elsewhere.py: not recorded") == 1
        assert "binary" in caplog.text and "larger than" in caplog.text
    finally:
        await peers.part.close()


async def test_malformed_messages_go_on_and_nothing_raises(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        odd = [
            msg(None),
            msg({"jsonrpc": "2.0", "method": "session/update", "params": "x"}),
            msg(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": "S-1",
                        "update": {"sessionUpdate": "tool_call", "toolCallId": 3, "content": [{"type": "diff"}]},
                    },
                }
            ),
            msg(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": "S-1",
                        "update": {
                            "sessionUpdate": "tool_call",
                            "toolCallId": "x",
                            "content": [{"type": "diff", "path": 5, "newText": None}],
                        },
                    },
                }
            ),
            msg(
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "fs/write_text_file",
                    "params": {"sessionId": "S-1", "path": None},
                }
            ),
            msg(
                {
                    "jsonrpc": "2.0",
                    "id": 10,
                    "method": "session/request_permission",
                    "params": {"sessionId": "S-1", "toolCall": "?", "options": 3},
                }
            ),
            msg(
                {
                    "jsonrpc": "2.0",
                    "id": 11,
                    "method": "session/prompt",
                    "params": {"sessionId": "S-1", "prompt": "text"},
                }
            ),
            msg(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": "unknown",
                        "update": {
                            "sessionUpdate": "tool_call",
                            "toolCallId": "x",
                            "content": [
                                {"type": "diff", "path": str(root / "a.py"), "oldText": "line 1", "newText": "L"}
                            ],
                        },
                    },
                }
            ),
        ]
        for m in odd:
            assert await peers.part.from_agent(m, None) is FORWARD
            assert await peers.part.from_editor(m, None) is FORWARD
        assert await peers.part.from_editor(msg({"jsonrpc": "2.0", "id": 1, "result": 5}), odd[4]) is FORWARD
        assert await hunks(root) == []
    finally:
        await peers.part.close()


async def test_a_project_without_a_store_gets_one_where_the_cli_makes_it(tmp_path):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()  # the enclosing work tree: where `stet propose` would make the store
    (root / "src" / "a.py").write_text(TEXT)
    peers = Peers(root / "src")
    try:
        await peers.start()
        await peers.new_session("S-1")
        assert await peers.tool_call("S-1", "t", root / "src" / "a.py", "line 3", "L") is FORWARD
        assert (root / ".stet" / "stet.db").is_file()
        assert not (root / "src" / ".stet").exists()
    finally:
        await peers.part.close()
    assert [h["status"] for h in await hunks(root)] == ["pending"]


async def test_the_home_folder_itself_gets_no_store_and_passes_through(tmp_path, caplog):
    home = tmp_path / "home"
    home.mkdir()
    (home / "a.py").write_text(TEXT)
    peers = Peers(home, env={"HOME": str(home)})
    try:
        await peers.start()
        with caplog.at_level(logging.WARNING):
            await peers.new_session("S-1")
            await peers.new_session("S-2")
            assert await peers.tool_call("S-1", "t", home / "a.py", "line 1", "L") is FORWARD
            assert await peers.prompt("S-1") is FORWARD
        assert not (home / ".stet").exists()
        assert caplog.text.count("no project's folder") == 1
    finally:
        await peers.part.close()


async def test_sessions_are_independent_tasks(tmp_path):
    root, peers = await _ready(tmp_path, name="my-agent")
    try:
        await peers.new_session("S-2")
        await peers.tool_call("S-1", "t", root / "a.py", "line 2", "ONE")
        await peers.tool_call("S-2", "t", root / "a.py", "line 9", "NINE")
        tasks = {h["newText"]: (h["taskId"], h["agent"]) for h in await hunks(root)}
        assert tasks == {"ONE\n": ("acp-my-agent-S-1", "my-agent"), "NINE\n": ("acp-my-agent-S-2", "my-agent")}
        assert (await status(root, "--task", "acp-my-agent-S-1"))["counts"]["pending"] == 1
    finally:
        await peers.part.close()


def test_the_agent_is_named_after_its_program_or_package():
    assert name_from_command(["npx", "-y", "@zed-industries/claude-code-acp@0.16.2"]) == "claude-code-acp"
    assert name_from_command(["/usr/local/bin/gemini", "--experimental-acp"]) == "gemini"
    assert name_from_command(["pnpm", "dlx", "@zed-industries/codex-acp"]) == "codex-acp"
    assert name_from_command(["uvx", "fast-agent-acp@1.2"]) == "fast-agent-acp"
    assert name_from_command(["node", "/opt/agent/cli.js"]) == "cli"
    assert name_from_command([]) == "agent"


def test_messages_are_json_lines():
    m = msg({"a": 1})
    assert json.loads(m.raw) == {"a": 1}


def test_a_diff_is_placed_in_the_file_as_it_is_or_as_it_was():
    from stet.acp.recording import NotRecorded, Resolved, resolve

    f = "a\nb\nc\n"
    assert resolve(f, "A\n", f, made=False) == Resolved(f, "A\n", f)  # the whole file
    assert resolve("b", "B", f, made=False) == Resolved(f, "a\nB\nc\n", f)  # a snippet, once
    assert resolve(None, "new\n", None, made=False) == Resolved(None, "new\n", None)
    # Reported done: the new text is in the file already (an append, whose old text is there too).
    assert resolve("b\n", "b\nx\n", "a\nb\nx\nc\n", made=True) == Resolved("a\nb\nc\n", "a\nb\nx\nc\n", "a\nb\nx\nc\n")
    assert resolve("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", made=True) == Resolved("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n")
    for old, now in (("z", f), ("a", "a a"), ("b", None)):
        try:
            resolve(old, "Q", now, made=False)
        except NotRecorded:
            continue
        raise AssertionError(f"{old!r} placed in {now!r}")


async def test_the_hunks_message_says_what_the_developer_asked(tmp_path):
    root, peers = await _ready(tmp_path)
    try:
        await peers.prompt("S-1", "rename the helper\n   and its <callers>")
        await peers.tool_call("S-1", "t1", root / "a.py", "line 3", "LINE THREE")
    finally:
        await peers.part.close()
    [h] = await hunks(root)
    assert h["message"] == "claude-code-acp: rename the helper and its <callers>"
