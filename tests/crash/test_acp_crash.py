"""`stet acp` between a raw scripted editor and the fake ACP agent, as real processes, killed: a
change the agent proposed is a durable pending kept hunk of the session's task `acp-<agent>-<session>`
before the editor sees it, whoever dies when - stet (SIGKILL, or a fault point right after the record
and before the message went on), the agent, or both. A session loaded again after a kill and the
same change reported again records nothing twice. A huge diff is recorded or refused with a log
line, never blocking: the editor gets every message."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from stet.faults import ACP_POINTS
from support.acp_raw import (
    Client,
    gone,
    is_tool_call,
    load_session,
    new_session,
    pid_in,
    prompt,
    received_prompts,
    start,
    stderr_of,
    write_file,
)
from support.clitools import commit_all, make_repo, stet, stet_json

BASE = "x = 1\n"
TASK = "acp-fake-agent-sess-1"  # the fake agent's name (its initialize's agentInfo) and first session
AFTER_RECORD, AFTER_TELL = ACP_POINTS  # each of stet acp's fault points is killed at below


@pytest.fixture
def root(tmp_path) -> Path:
    """A git repository with a.py and b.py, and its Stet store (`stet init`)."""
    root = make_repo(tmp_path / "ws")
    for name in ("a.py", "b.py"):
        (root / name).write_text(BASE)
    commit_all(root)
    p = stet("init", cwd=root)
    assert p.returncode == 0, p.stderr
    return root


@pytest.fixture
def agents(tmp_path):
    """The fake agents' pid files; any agent left running at the end (stet killed under it) is killed."""
    made: list[Path] = []

    def pidfile() -> Path:
        made.append(tmp_path / f"agent-{len(made)}.pid")
        return made[-1]

    yield pidfile
    for path in made:
        if path.exists() and path.read_text().strip():
            try:
                os.kill(int(path.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def hunks(root: Path) -> list[dict]:
    return stet_json("status", "--all", cwd=root)["hunks"]


def the_hunk(root: Path, name: str = "a.py", task: str = TASK) -> dict:
    """The one hunk of `name` in the store: pending, kept, of the session's task, by the fake agent."""
    hs = [h for h in hunks(root) if h["uri"].endswith("/" + name)]
    assert len(hs) == 1, hs
    (h,) = hs
    assert (h["status"], h.get("kept"), h["taskId"]) == ("pending", True, task), h
    assert (h["oldText"], h["newText"]) == (BASE, "x = 2\n"), h
    assert h.get("agent") == "fake-agent", h
    return h


def gone_with_stet(pidfile: Path) -> None:
    """The agent of a stet killed ended (stet's reaper stops it; killed here if it still runs)."""
    try:
        os.kill(pid_in(pidfile), signal.SIGKILL)
    except ProcessLookupError:
        pass


async def killed(client: Client) -> int:
    """SIGKILL stet, as `kill -9` would; its exit status."""
    client.proc.kill()
    return await client.exited()


async def test_stet_killed_right_after_the_editor_got_the_change_keeps_the_hunk_and_loading_again_adds_none(
    root, agents
):
    pidfile = agents()
    client = await start(root, "--pidfile", str(pidfile), stet_args=())
    session = await new_session(client, root)
    assert session == "sess-1"
    await prompt(client, session, "diff write slow:120")
    await client.until(is_tool_call)
    assert (root / "a.py").read_text() == BASE  # nothing written by Stet: the editor writes ACP edits
    asked = await client.until(lambda m: m.get("method") == "fs/write_text_file")
    write_file(asked["params"])  # the editor writes the file; stet dies before its answer goes back
    assert await killed(client) == -signal.SIGKILL
    first = the_hunk(root)
    gone_with_stet(pidfile)

    # The editor runs `stet acp` again and loads the session; the agent reports the change again
    # (the file holds it now) and writes it again.
    client = await start(root, "--pidfile", str(agents()), stet_args=())
    await load_session(client, root, session)
    rid = await prompt(client, session, "diff write")
    assert (await client.answer_of(rid, {"fs/write_text_file": write_file}))["result"] == {"stopReason": "end_turn"}
    await client.close()
    assert await client.exit_code() == 0
    again = the_hunk(root)
    assert again["id"] == first["id"] and again["inFile"] is True, (first, again)
    assert len(hunks(root)) == 1 and (root / "a.py").read_text() == "x = 2\n"


@pytest.mark.parametrize("point", [AFTER_RECORD, "capture:after-commit"])
async def test_killed_after_the_record_before_the_forward_then_the_session_loaded_records_nothing_twice(
    root, agents, point
):
    pidfile = agents()
    client = await start(root, "--pidfile", str(pidfile), stet_args=(), env={"STET_FAULT": point})
    session = await new_session(client, root)
    await prompt(client, session, "update diff slow:120")
    while (msg := await client.message()) is not None:
        assert not is_tool_call(msg), "the editor got the diff: the fault point is after the forward"
    assert await client.exited() == -signal.SIGKILL
    first = the_hunk(root)  # the editor never saw it, yet it is recorded
    assert first["inFile"] is False and (root / "a.py").read_text() == BASE  # and said not in the file
    gone_with_stet(pidfile)

    # The editor starts `stet acp` again and loads its session; the agent reports the same change.
    received = root.parent / "received"
    client = await start(root, "--received", str(received), "--pidfile", str(agents()), stet_args=())
    await load_session(client, root, session)
    rid = await prompt(client, session, "diff")
    seen: list = []
    assert (await client.answer_of(rid, seen=seen))["result"] == {"stopReason": "end_turn"}
    assert any(is_tool_call(m, "call-1") for m in seen)
    assert the_hunk(root)["id"] == first["id"]  # the same hunk: nothing recorded twice
    assert len(hunks(root)) == 1
    # The loaded session's first prompt told the agent of the open review.
    (told,) = received_prompts(received)
    blocks = told["params"]["prompt"]
    assert len(blocks) == 2 and "a.py" in blocks[1]["text"], blocks
    await client.close()
    assert await client.exit_code() == 0


async def test_the_agent_killed_mid_prompt_answers_the_editor_and_the_review_keeps_the_change(root, agents):
    pidfile = agents()
    client = await start(root, "--pidfile", str(pidfile), stet_args=())
    session = await new_session(client, root)
    rid = await prompt(client, session, "diff write:b.py slow:120")
    await client.until(lambda m: m.get("method") == "fs/write_text_file")  # the diff came before it
    write_file({"path": str(root / "b.py"), "content": "x = 2\n"})  # the editor writes; its answer is late
    os.kill(pid_in(pidfile), signal.SIGKILL)
    answer = await client.answer_of(rid)
    assert answer["error"]["code"] == -32603 and "the agent exited" in answer["error"]["message"], answer
    assert await client.exit_code() == 128 + signal.SIGKILL
    the_hunk(root, "a.py")
    b = the_hunk(root, "b.py")
    assert b["inFile"] is True, b
    assert "Traceback" not in await stderr_of(client)


async def test_the_editor_gone_mid_prompt_ends_it_and_the_review_keeps_the_change(root, agents):
    pidfile = agents()
    client = await start(root, "--pidfile", str(pidfile), stet_args=())
    session = await new_session(client, root)
    await prompt(client, session, "diff slow:120")
    await client.until(is_tool_call)
    await client.close()
    await client.exit_code()
    assert await gone(pid_in(pidfile), 10), "the agent was left running"
    the_hunk(root)


async def test_stet_and_the_agent_killed_together_keep_what_was_recorded(root, agents):
    pidfile = agents()
    client = await start(root, "--pidfile", str(pidfile), stet_args=())
    session = await new_session(client, root)
    await prompt(client, session, "diff diff:b.py slow:120")
    await client.until(lambda m: is_tool_call(m, "call-b.py"))
    os.kill(pid_in(pidfile), signal.SIGKILL)
    assert await killed(client) == -signal.SIGKILL
    assert await gone(pid_in(pidfile), 10)
    the_hunk(root, "a.py")
    the_hunk(root, "b.py")


@pytest.mark.parametrize(("size", "kept"), [(4 << 20, True), (12 << 20, False)], ids=["4MB-recorded", "12MB-refused"])
async def test_a_huge_diff_is_recorded_or_refused_with_a_log_line_and_blocks_nothing(root, agents, size, kept):
    client = await start(root, "--pidfile", str(agents()), stet_args=())
    session = await new_session(client, root)
    rid = await prompt(client, session, f"update bigdiff:{size} update diff")
    seen: list = []
    assert (await client.answer_of(rid, seen=seen, timeout=120))["result"] == {"stopReason": "end_turn"}
    kinds = [
        m["params"]["update"].get("toolCallId") or m["params"]["update"]["sessionUpdate"]
        for m in seen
        if m.get("method") == "session/update"
    ]
    assert kinds == ["agent_message_chunk", "call-big", "agent_message_chunk", "call-1"], kinds
    (big,) = [m for m in seen if is_tool_call(m, "call-big")]
    assert len(big["params"]["update"]["content"][0]["newText"]) >= size
    await client.close()
    assert await client.exit_code() == 0
    log = await stderr_of(client)
    the_hunk(root, "a.py")  # the change after it recorded as ever
    recorded = [h for h in hunks(root) if h["uri"].endswith("/big.txt")]
    if kept:
        assert [(h["status"], h["kind"], h.get("kept")) for h in recorded] == [("pending", "create", True)], recorded
        assert len(json.dumps(recorded[0])) >= size
    else:
        assert recorded == []
        assert log.count("big.txt") == 1 and "larger than" in log, log


async def test_a_whole_file_diff_of_a_several_mb_file_is_one_hunk_and_blocks_nothing(root, agents):
    lines = [f"line {i:09d} of a big file\n" for i in range((6 << 20) // 26)]
    (root / "big.txt").write_text("".join(lines))
    client = await start(root, "--pidfile", str(agents()), stet_args=())
    session = await new_session(client, root)
    # Gemini CLI's way: the diff's oldText is the whole file, its newText the whole file edited.
    rid = await prompt(client, session, "update whole:big.txt update")
    seen: list = []
    assert (await client.answer_of(rid, seen=seen, timeout=120))["result"] == {"stopReason": "end_turn"}
    assert [m["params"]["update"]["sessionUpdate"] for m in seen if m.get("method") == "session/update"] == [
        "agent_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    await client.close()
    assert await client.exit_code() == 0
    (h,) = hunks(root)
    middle = len(lines) // 2
    assert (h["status"], h.get("kept"), h["taskId"], h["kind"]) == ("pending", True, TASK, "edit"), h
    assert (h["range"]["start"]["line"], h["oldText"], h["newText"]) == (
        middle,
        lines[middle],
        "changed by the agent\n",
    )


@pytest.mark.parametrize("resumed", ["loaded", "new"])
async def test_killed_after_telling_before_the_prompt_went_on_the_feedback_is_told_at_the_next_session(
    root, agents, resumed
):
    client = await start(root, stet_args=())
    session = await new_session(client, root)
    rid = await prompt(client, session, "diff:b.py write:b.py")
    assert (await client.answer_of(rid, {"fs/write_text_file": write_file}))["result"] == {"stopReason": "end_turn"}
    await client.close()
    assert await client.exit_code() == 0
    rejected = stet("reject", the_hunk(root, "b.py")["id"], "--feedback", "keep b.py as it is", cwd=root)
    assert rejected.returncode == 0, rejected.stderr

    # The session goes on in a new stet acp (the editor restarted), killed once the rejection is
    # recorded as told and before the prompt telling it reached the agent.
    pidfile, received = agents(), root.parent / "received"
    client = await start(
        root, "--pidfile", str(pidfile), "--received", str(received), stet_args=(), env={"STET_FAULT": AFTER_TELL}
    )
    await load_session(client, root, session)
    await prompt(client, session, "update")
    while await client.message() is not None:
        pass
    assert await client.exited() == -signal.SIGKILL
    gone_with_stet(pidfile)
    assert received_prompts(received) == []  # the agent never got it

    client = await start(root, "--received", str(received), stet_args=())
    if resumed == "loaded":
        await load_session(client, root, session)
    else:
        session = await new_session(client, root)
    rid = await prompt(client, session, "update")
    assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
    (told,) = received_prompts(received)
    block = told["params"]["prompt"][-1]["text"]
    assert "b.py" in block and "keep b.py as it is" in block, told
    await client.close()
    assert await client.exit_code() == 0
