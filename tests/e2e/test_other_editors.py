"""A whole review with standard LSP only (code lenses, code actions, hover, executeCommand,
applyEdit), as real editors declare their capabilities (pytest-lsp's client profiles).
LspSpecificationWarning is an error here (pyproject), so the server must respect each
client's declared capabilities."""

import asyncio

import pytest

from support.harness import Session, rng

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))
PROFILES = ["visual_studio_code", "neovim@v0.7.0", "neovim", "emacs"]


@pytest.mark.parametrize("profile", PROFILES)
async def test_review_with_standard_requests_only(ws, profile):
    s = Session(ws, capabilities=profile)
    await s.start()
    try:
        a = s.open(ws / "a.py")
        hunks = (
            await s.propose(
                "p", {a: [(rng(1, 0, 2, 0), "TWO\n"), (rng(4, 0, 5, 0), "FIVE\n"), (rng(7, 0, 8, 0), "EIGHT\n")]}
            )
        )["hunks"]
        ids = [h["id"] for h in hunks]
        for _ in range(50):  # diagnostics show every pending hunk
            if len(s.client.diagnostics.get(a, [])) == 3:
                break
            await asyncio.sleep(0.05)
        assert {d.code for d in s.client.diagnostics[a]} == set(ids)

        # 1. Accept the first hunk from its code lens (where the editor has code lenses).
        caps = s.client.capabilities.text_document
        if caps.code_lens is not None:
            lenses = await s.request("textDocument/codeLens", {"textDocument": {"uri": a}})
            lens = next(
                x for x in lenses if x["command"]["command"] == "stet.accept" and x["range"]["start"]["line"] == 1
            )
            await s.command(lens["command"]["command"], lens["command"]["arguments"][0])
        else:
            actions = await s.request(
                "textDocument/codeAction",
                {"textDocument": {"uri": a}, "range": rng(1, 0, 1, 0), "context": {"diagnostics": []}},
            )
            cmd = next(x.get("command", x) for x in actions if (x.get("command", x))["command"] == "stet.accept")
            await s.command(cmd["command"], cmd["arguments"][0])

        # 2. Reject the second from the code action at the cursor.
        actions = await s.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": a}, "range": rng(4, 3, 4, 3), "context": {"diagnostics": []}},
        )
        commands = [x.get("command", x) if "kind" in x or "edit" in x else x for x in actions]
        reject = next(c for c in commands if c["command"] == "stet.reject")
        assert reject["arguments"] == [{"hunkIds": [ids[1]]}]
        await s.command(reject["command"], reject["arguments"][0])

        # 3. Read the third in a hover, then accept what is left of the file.
        hover = await s.request(
            "textDocument/hover", {"textDocument": {"uri": a}, "position": {"line": 7, "character": 1}}
        )
        assert "-line 8" in hover["contents"]["value"] and "+EIGHT" in hover["contents"]["value"]
        await s.command("stet.acceptFile", {"uri": a})

        assert s.text(a) == A_TEXT.replace("line 2\n", "TWO\n").replace("line 8\n", "EIGHT\n")
        states = {h["id"]: h["status"] for h in await s.hunks()}
        assert states == {ids[0]: "applied", ids[1]: "rejected", ids[2]: "applied"}
        for _ in range(50):
            if not s.client.diagnostics.get(a):
                break
            await asyncio.sleep(0.05)
        assert list(s.client.diagnostics[a]) == []
    finally:
        await s.stop()
