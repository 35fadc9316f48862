"""Accept with changes of a hunk whose new text was kept in the file for review (`--keep`,
Claude Code's captures): the developer's text replaces the agent's, it never ends stale."""

import asyncio
import time

from pygls.exceptions import JsonRpcException

from support.clitools import stet, stet_json
from support.harness import read


async def accept_when_known(session, hid: str, text: str) -> dict:
    """The server learns of a hunk another process committed within a sync interval."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return await session.command("stet.accept", {"hunkIds": [hid], "text": text})
        except JsonRpcException:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_accept_with_text_of_a_kept_hunk_writes_the_developers_text(ws, session):
    assert stet("snapshot", "a.py", cwd=ws).returncode == 0
    before = read(ws / "a.py")
    agent = before.replace("line 3\n", "AGENT 3\n")
    (ws / "a.py").write_text(agent)
    (h,) = stet_json("capture", "--keep", cwd=ws)["hunks"]
    assert h["kept"] and read(ws / "a.py") == agent, "the agent's text stays for review"
    out = await accept_when_known(session, h["id"], "MINE 3\n")
    assert out["hunks"][0]["status"] == "applied", out
    assert read(ws / "a.py") == before.replace("line 3\n", "MINE 3\n")
    listed = stet_json("status", "--all", cwd=ws)["hunks"]
    assert [(x["id"], x["status"], x["inFile"]) for x in listed] == [(h["id"], "applied", True)]


def test_accept_with_text_of_a_kept_hunk_from_another_process(ws):
    """Without an editor: the same decision made by a process that writes the file itself."""
    assert stet("snapshot", "b.txt", cwd=ws).returncode == 0
    (ws / "b.txt").write_text("alpha\nAGENT\ngamma\n")
    (h,) = stet_json("capture", "--keep", cwd=ws)["hunks"]
    code = (
        "import asyncio, sys\n"
        "from stet.review import open_review\n"
        "async def main():\n"
        "    o = await open_review([sys.argv[1]], sys.argv[2], create=False)\n"
        "    decided = await o.review.decide('accept', [sys.argv[3]], text='MINE\\n')\n"
        "    print(decided.hunks[0].status.value)\n"
        "    await o.review.close()\n"
        "asyncio.run(main())\n"
    )
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-c", code, str(ws), str(ws / ".stet" / "stet.db"), h["id"]], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "applied"
    assert read(ws / "b.txt") == "alpha\nMINE\ngamma\n"
