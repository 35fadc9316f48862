"""The same review, whichever door: `stet acp` records what an ACP agent proposes while Stet's
language server is open on the same workspace (real processes both). The language server shows
the recorded hunks (listed, and told in `stet/hunksChanged`); the developer accepts one there (the
file holds the agent's text already: applied, nothing written) and rejects another (its file
reverted); the agent's next prompt, through `stet acp`, carries the decision and its feedback."""

from __future__ import annotations

from pathlib import Path

from support.acp_raw import new_session, prompt, received_prompts, start, write_file
from support.clitools import commit_all, make_repo, stet, stet_json
from support.harness import Session, read, rng, until, uri

BASE, AGENTS = "x = 1\n", "x = 2\n"
TASK = "acp-fake-agent-sess-1"
FEEDBACK = "keep x at one in b.py: other modules read it"


def workspace(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ws")
    for name in ("a.py", "b.py"):
        (root / name).write_text(BASE)
    commit_all(root)
    p = stet("init", cwd=root)
    assert p.returncode == 0, p.stderr
    return root


async def test_a_change_recorded_by_stet_acp_is_decided_in_the_editor_and_told_at_the_next_prompt(tmp_path):
    root = workspace(tmp_path)
    received = tmp_path / "received"
    lsp = Session(root)
    await lsp.start()
    client = await start(root, "--received", str(received), stet_args=())
    try:
        session = await new_session(client, root)
        # Each change as an agent reports it: its tool call's diff, then the editor writing the file.
        rid = await prompt(client, session, "diff write diff:b.py write:b.py")
        done = await client.answer_of(rid, {"fs/write_text_file": write_file})
        assert done["result"] == {"stopReason": "end_turn"}
        assert read(root / "a.py") == read(root / "b.py") == AGENTS

        def both_pending(hs: list[dict]) -> bool:
            return len(hs) == 2 and all(h["status"] == "pending" and h.get("kept") for h in hs)

        hunks = await lsp.hunks_until(both_pending, "the two recorded hunks listed by the language server", 60)
        assert {h["taskId"] for h in hunks} == {TASK}
        assert all(h["inFile"] is True and (h["oldText"], h["newText"]) == (BASE, AGENTS) for h in hunks), hunks
        by_file = {Path(h["uri"]).name: h for h in hunks}
        await until(
            lambda: {uri(root / "a.py"), uri(root / "b.py")} <= {c["uri"] for c in lsp.changed},
            "stet/hunksChanged for both files",
            60,
        )

        # Accepted in the editor: applied, the file as the agent left it.
        await lsp.command("stet.accept", {"hunkIds": [by_file["a.py"]["id"]]})
        await lsp.hunks_until(
            lambda hs: any(h["id"] == by_file["a.py"]["id"] and h["status"] == "applied" for h in hs),
            "a.py's hunk applied",
        )
        assert read(root / "a.py") == AGENTS
        # Rejected with feedback: the file back as it was.
        await lsp.command("stet.reject", {"hunkIds": [by_file["b.py"]["id"]], "feedback": FEEDBACK})
        await until(lambda: read(root / "b.py") == BASE, "b.py reverted")
        assert read(root / "a.py") == AGENTS

        # The agent's next prompt carries the decisions, the feedback with them.
        rid = await prompt(client, session, "update")
        assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
        told = received_prompts(received)[-1]["params"]["prompt"]
        assert told[0] == {"type": "text", "text": "update"}
        assert len(told) == 2 and told[1]["type"] == "text", told
        block = told[1]["text"]
        assert FEEDBACK in block and "b.py" in block and len(block) <= 4000, block
        # The agent makes the rejected change again, in a new tool call: Stet refuses its permission
        # for the developer (the editor is not asked), and the record says rejected, with the feedback.
        rid = await prompt(client, session, "diff:b.py:call-again permission:b.py:call-again")
        seen: list = []
        assert (await client.answer_of(rid, seen=seen))["result"] == {"stopReason": "end_turn"}
        assert not [m for m in seen if m.get("method") == "session/request_permission"]
        said = [
            m["params"]["update"]["content"]["text"]
            for m in seen
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert any(t.startswith("answer ") and '"optionId": "reject"' in t for t in said), said
        assert read(root / "b.py") == BASE
        # (The same change as the rejected hunk: that hunk stands for it, no other is made.)
        listed = [h for h in stet_json("status", "--all", cwd=root)["hunks"] if h["uri"].endswith("/b.py")]
        assert {(h["status"], h["feedback"]) for h in listed} == {("rejected", FEEDBACK)}, listed
        await lsp.hunks_until(
            lambda hs: not [h for h in hs if h["uri"].endswith("/b.py") and h["status"] == "pending"],
            "no b.py hunk pending in the language server",
        )
        # ...and tells the agent why at its next prompt.
        rid = await prompt(client, session, "update")
        assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
        told = received_prompts(received)[-1]["params"]["prompt"]
        assert len(told) == 2 and FEEDBACK in told[1]["text"] and "b.py" in told[1]["text"], told
        # Told once: the prompt after it goes through as the editor sent it.
        rid = await prompt(client, session, "update")
        assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
        assert received_prompts(received)[-1]["params"]["prompt"] == [{"type": "text", "text": "update"}]
        await client.close()
        assert await client.exit_code() == 0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
        await lsp.kill_if_running()


async def test_the_agents_writes_into_open_buffers_are_decided_there(tmp_path):
    """As in Zed, where the editor writing for the agent and the one showing the review are one: the
    files are open, an fs/write_text_file goes into the buffer (and is saved); a rejection reverts
    the buffer (workspace/applyEdit), an acceptance leaves it."""
    root = workspace(tmp_path)
    lsp = Session(root)
    await lsp.start()
    for name in ("a.py", "b.py"):
        lsp.open(root / name)
    client = await start(root, stet_args=())

    def into_the_buffer(params: dict) -> None:
        path = Path(params["path"])
        lsp.type(path, rng(0, 0, len(lsp.text(path).splitlines()), 0), params["content"])
        lsp.save(path)

    try:
        session = await new_session(client, root)
        rid = await prompt(client, session, "diff write diff:b.py write:b.py")
        done = await client.answer_of(rid, {"fs/write_text_file": into_the_buffer})
        assert done["result"] == {"stopReason": "end_turn"}
        hunks = await lsp.hunks_until(
            lambda hs: len(hs) == 2 and all(h["status"] == "pending" and h.get("kept") for h in hs),
            "the two recorded hunks listed",
            60,
        )
        by_file = {Path(h["uri"]).name: h for h in hunks}
        applies = lsp.apply_requests
        await lsp.command("stet.accept", {"hunkIds": [by_file["a.py"]["id"]]})
        await lsp.command("stet.reject", {"hunkIds": [by_file["b.py"]["id"]], "feedback": FEEDBACK})
        await lsp.hunks_until(
            lambda hs: (
                {h["id"]: h["status"] for h in hs if h["id"] in (by_file["a.py"]["id"], by_file["b.py"]["id"])}
                == {by_file["a.py"]["id"]: "applied", by_file["b.py"]["id"]: "rejected"}
            ),
            "a.py's hunk applied, b.py's rejected",
        )
        assert lsp.text(root / "a.py") == AGENTS and lsp.text(root / "b.py") == BASE
        assert lsp.apply_requests == applies + 1  # the rejection's edit only
        rid = await prompt(client, session, "update")
        assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
        await client.close()
        assert await client.exit_code() == 0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
        await lsp.kill_if_running()


async def test_a_permission_the_editor_refuses_is_a_rejection_in_the_review(tmp_path):
    """The developer said no in the editor's permission dialog: the change recorded from its
    tool call shows rejected in the language server, and the agent (told by its refusal) is not
    told again at its next prompt."""
    root = workspace(tmp_path)
    received = tmp_path / "received"
    lsp = Session(root)
    await lsp.start()
    client = await start(root, "--received", str(received), stet_args=())
    try:
        session = await new_session(client, root)
        rid = await prompt(client, session, "diff:b.py permission:b.py")
        refused = {"outcome": {"outcome": "selected", "optionId": "reject"}}
        assert (await client.answer_of(rid, {"session/request_permission": refused}))["result"] == {
            "stopReason": "end_turn"
        }
        (h,) = await lsp.hunks_until(
            lambda hs: [h["status"] for h in hs if h["uri"].endswith("/b.py")] == ["rejected"],
            "b.py's hunk rejected",
            60,
            statuses=["rejected"],
        )
        assert h["taskId"] == TASK and read(root / "b.py") == BASE
        rid = await prompt(client, session, "update")
        assert (await client.answer_of(rid))["result"] == {"stopReason": "end_turn"}
        assert received_prompts(received)[-1]["params"]["prompt"] == [{"type": "text", "text": "update"}]
        await client.close()
        assert await client.exit_code() == 0
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
        await lsp.kill_if_running()
