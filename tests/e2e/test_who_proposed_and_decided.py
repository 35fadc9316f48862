"""Who proposed a hunk and who decided it, through the editor's server: the agent's name (the
proposal's, as `stet integrate` names it for the hooks' captures) and a rejection sent back to
the agent by request changes, which another process records: the editor hears of it (a
`stet/hunksChanged` whose HunkState says `sentBack`) and its hover says so."""

from __future__ import annotations

import shlex
import sys

from support.capturetools import agent_repo
from support.claudecode import Claude
from support.clitools import commit_all, stet, stet_json
from support.harness import Session, until

STET = f"{shlex.quote(sys.executable)} -m stet"
S1 = "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e"
FEEDBACK = "keep the limit at 10"


async def test_the_editor_hears_of_a_rejection_sent_back_and_names_the_agent(tmp_path):
    repo = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, "--request-changes", cwd=repo).returncode == 0
    commit_all(repo, "set up")
    claude = Claude(repo, S1)
    claude.prompt("raise the limit")
    claude.edit("a.py", "LIMIT = 10", "LIMIT = 20")
    claude.stop()
    session = Session(repo)
    await session.start()
    try:
        a = session.open(repo / "a.py")
        (h,) = [x for x in await session.hunks() if x["newText"] == "LIMIT = 20\n"]
        assert h["agent"] == "claude-code" and "sentBack" not in h
        line = h["range"]["start"]["line"]
        hover = await session.request(
            "textDocument/hover", {"textDocument": {"uri": a}, "position": {"line": line, "character": 0}}
        )
        assert "proposed by claude\\-code" in hover["contents"]["value"]
        await session.command("stet.reject", {"hunkIds": [h["id"]], "feedback": FEEDBACK})
        assert claude.stop()["decision"] == "block"  # the agent's hook, another process

        def told() -> bool:
            return any(
                x["id"] == h["id"] and x.get("sentBack") is True for c in session.changed for x in c.get("hunks", [])
            )

        await until(told, "a stet/hunksChanged saying the rejection was sent back")
        (sent,) = [x for x in await session.hunks() if x["id"] == h["id"]]
        assert sent["sentBack"] is True and sent["status"] == "rejected"
        hover = await session.request(
            "textDocument/hover", {"textDocument": {"uri": a}, "position": {"line": line, "character": 0}}
        )
        assert hover is not None and "sent back to the agent" in hover["contents"]["value"]
    finally:
        await session.stop()


def test_a_proposal_names_its_agent_else_its_tasks(tmp_path):
    """The agent is the proposal's when it named one, else its task's (`stet task start --agent`);
    unknown otherwise: no `agent`, no AGENT column."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("one\ntwo\n")
    assert stet("init", cwd=root).returncode == 0

    def patch(new: str) -> str:
        path = root.parent / f"{new}.patch"
        path.write_text(f"--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-one\n+{new}\n two\n")
        return str(path)

    assert stet("propose", "--patch", patch("ONE"), cwd=root).returncode == 0
    (plain,) = stet_json("status", cwd=root)["hunks"]
    assert "agent" not in plain and "AGENT" not in stet("status", cwd=root).stdout
    assert stet("reject", plain["id"], cwd=root).returncode == 0
    assert stet("task", "start", "Shout", "--id", "t1", "--agent", "gemini", cwd=root).returncode == 0
    assert stet("propose", "--task", "t1", "--patch", patch("One"), cwd=root).returncode == 0
    assert (
        stet("propose", "--task", "t1", "--agent", "codex", "--id", "p2", "--patch", patch("oNE"), cwd=root).returncode
        == 0
    )
    got = {h["proposalId"]: h.get("agent") for h in stet_json("status", "--all", cwd=root)["hunks"]}
    assert got[plain["proposalId"]] is None and got["p2"] == "codex"
    assert sorted(v for v in got.values() if v) == ["codex", "gemini"], got
    table = stet("status", "--all", cwd=root).stdout  # (p2 superseded the task's first proposal)
    assert "AGENT" in table and "gemini" in table, table
