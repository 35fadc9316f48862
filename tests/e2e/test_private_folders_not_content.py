"""`.git/` and `.stet/` are not content.

The attacks, for real, in a real git repository with a Stet server running: a hostile agent
proposes to plant `core.fsmonitor` in `.git/config` (git would run it at the next `git
status`), to create `.git/hooks/post-checkout`, to delete `.stet/files.lock` and to inject a
proposal into `.stet/inbox/`, through every door - the LSP request, an inbox `.json`, the
MCP server, `stet propose --edit` and a patch walking around the patch door's own check
through a symlink `g -> .git`. Each is refused (-32003 / exit 2 / inbox failed/), and the
files are untouched. A store kept elsewhere in the workspace (`--db`) is protected the same."""

from __future__ import annotations

import json
import os
import time

from support.clitools import make_repo, stet
from support.harness import rng, write
from support.rawlsp import RawServer
from support.workers import call, mcp_client

PLANT = "[core]\n\tfsmonitor = touch PWNED\n"


def attacks(ws) -> dict[str, dict]:
    """WorkspaceEdits that would touch git's or Stet's own files (`g` is a symlink to .git)."""

    def u(rel):
        return (ws / rel).as_uri()

    def edit(rel):
        return {
            "textDocument": {"uri": u(rel), "version": None},
            "edits": [{"range": rng(0, 0, 0, 0), "newText": PLANT}],
        }

    return {
        "fsmonitor": {"documentChanges": [edit(".git/config")]},
        "fsmonitor-via-symlink": {"documentChanges": [edit("g/config")]},
        "changes-map": {"changes": {u(".git/config"): [{"range": rng(0, 0, 0, 0), "newText": PLANT}]}},
        "hook": {
            "documentChanges": [
                {"kind": "create", "uri": u(".git/hooks/post-checkout")},
                {
                    "textDocument": {"uri": u(".git/hooks/post-checkout"), "version": None},
                    "edits": [{"range": rng(0, 0, 0, 0), "newText": "#!/bin/sh\ntouch PWNED\n"}],
                },
            ]
        },
        "hook-via-symlink": {"documentChanges": [{"kind": "create", "uri": u("g/hooks/pre-commit")}]},
        "lock": {"documentChanges": [{"kind": "delete", "uri": u(".stet/files.lock")}]},
        "inject": {"documentChanges": [{"kind": "create", "uri": u(".stet/inbox/x.json")}]},
        "rename-into-git": {"documentChanges": [{"kind": "rename", "oldUri": u("a.py"), "newUri": u(".git/a.py")}]},
        "case": {"documentChanges": [{"kind": "create", "uri": u(".Git/hooks/x")}]},
    }


def snapshot(ws) -> dict:
    out = {}
    for folder in (ws / ".git", ws / ".stet"):
        for p in sorted(folder.rglob("*")):
            if p.is_file() and not p.name.startswith("stet.db"):
                out[str(p.relative_to(ws))] = p.read_bytes()
    return out


def test_git_and_stet_folders_are_refused_through_every_door(tmp_path):
    ws = make_repo(tmp_path / "ws")
    write(ws / "a.py", "print('hi')\n")
    os.symlink(ws / ".git", ws / "g")
    s = RawServer(ws)
    try:
        s.initialize()
        before = snapshot(ws)
        # The LSP door.
        for name, edit in attacks(ws).items():
            answer = s.request("stet/propose", {"proposalId": name, "edit": edit})
            assert answer.get("error", {}).get("code") == -32003, (name, answer)
            assert "own folder" in answer["error"]["message"], answer
        for u in ((ws / ".git" / "config").as_uri(), (ws / "g" / "config").as_uri()):
            answer = s.request("workspace/executeCommand", {"command": "stet.acceptFile", "arguments": [{"uri": u}]})
            assert answer["error"]["code"] == -32003, answer
        # The inbox door.
        inbox = ws / ".stet" / "inbox"
        for name, edit in attacks(ws).items():
            tmp = inbox / f"{name}.json.tmp"
            tmp.write_text(json.dumps({"edit": edit}))
            os.replace(tmp, inbox / f"{name}.json")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any((inbox / f"{n}.json").exists() for n in attacks(ws)):
            time.sleep(0.1)
        for name in attacks(ws):
            assert "OutsideWorkspace" in (inbox / "failed" / f"{name}.error").read_text(), name
        # The CLI doors: --edit, and a patch through the symlink.
        for name, edit in attacks(ws).items():
            (tmp_path / "e.json").write_text(json.dumps(edit))
            p = stet("propose", "--edit", str(tmp_path / "e.json"), "--id", f"cli-{name}", cwd=ws)
            assert p.returncode == 2 and "OutsideWorkspace" in p.stderr, (name, p.stderr)
        patch = f"--- a/g/config\n+++ b/g/config\n@@ -1 +1,2 @@\n+{PLANT.splitlines()[1]}\n {_first_line(ws)}\n"
        p = stet("propose", "--patch", "-", cwd=ws, input=patch)
        assert p.returncode == 2 and ".git" in p.stderr, p.stderr
        assert s.alive()
        assert s.call("stet/listHunks", {})["hunks"] == []  # nothing of it was stored
        new = {k for k in snapshot(ws) if k not in before}
        assert all(k.startswith(".stet/inbox/failed/") for k in new), new  # the refused drops, kept
        for rel, data in before.items():
            assert (ws / rel).read_bytes() == data, rel
        assert (
            not (ws / ".git" / "hooks" / "post-checkout").exists() and not (ws / ".stet" / "inbox" / "x.json").exists()
        )
        os.system(f"cd {ws} && git status >/dev/null 2>&1")
        assert not (ws / "PWNED").exists()
    finally:
        s.kill()


async def test_the_mcp_door_refuses_them_too(tmp_path):
    ws = make_repo(tmp_path / "ws")
    write(ws / "a.py", "print('hi')\n")
    os.symlink(ws / ".git", ws / "g")
    config = (ws / ".git" / "config").read_bytes()
    async with mcp_client(ws) as mcp:
        _, _, data = await call(mcp, "start_task", title="t", goal="g")
        task = data["task"]["id"]
        for path in (".git/config", "g/config", ".stet/stet.db", "sub/../.git/config"):
            error, text, _ = await call(
                mcp, "propose_edits", task_id=task, edits=[{"path": path, "old_text": "", "new_text": PLANT}]
            )
            assert error and "own folder" in text, (path, text)
    assert (ws / ".git" / "config").read_bytes() == config


def test_a_store_kept_inside_the_workspace_is_not_content(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "a.py", "x\n")
    db = ws / "review" / "stet.db"
    s = RawServer(ws, env={"STET_DB": str(db)})
    try:
        s.initialize()
        for rel in ("review/stet.db", "review/stet.db-wal", "review/stet.db.copy", "review/inbox/p.json"):
            answer = s.request(
                "stet/propose",
                {"proposalId": rel, "edit": {"documentChanges": [{"kind": "create", "uri": (ws / rel).as_uri()}]}},
            )
            assert answer["error"]["code"] == -32003 and "store" in answer["error"]["message"], (rel, answer)
        ok = s.request(  # the folder's other files are the developer's
            "stet/propose",
            {
                "proposalId": "ok",
                "edit": {"documentChanges": [{"kind": "create", "uri": (ws / "review" / "notes.md").as_uri()}]},
            },
        )
        assert "result" in ok, ok
    finally:
        s.kill()


def _first_line(ws) -> str:
    return (ws / ".git" / "config").read_text().splitlines()[0]
