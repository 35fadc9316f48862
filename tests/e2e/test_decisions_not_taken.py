"""A decision whose effect did not take says so: `stet accept` of a create
whose folder became a symlink out exits 1 with the reason, in every scope; the language server
answers with the hunk's state plus `notTaken` and tells the editor (window/showMessage)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from support.clitools import stet, stet_json
from support.harness import Session, uri

CREATE = "def added():\n    return 42\n"


def create_edit(root: Path, rel: str) -> dict:
    u = uri(root / rel)
    return {
        "documentChanges": [
            {"kind": "create", "uri": u},
            {
                "textDocument": {"uri": u, "version": None},
                "edits": [{"range": _zero(), "newText": CREATE}],
            },
        ]
    }


def _zero() -> dict:
    return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    (r / "keep.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    return r


def propose_create(root: Path) -> str:
    edit = root.parent / "edit.json"
    edit.write_text(json.dumps(create_edit(root, "pkg/new.py")))
    (hunk,) = stet_json("propose", "--edit", str(edit), "--id", "p1", "--task", "t", cwd=root)["hunks"]
    stet("status", cwd=root)  # Stet has looked at the files since
    return hunk["id"]


@pytest.mark.parametrize("scope", ["ids", "--proposal", "--task", "--file"])
def test_an_accept_that_could_not_be_written_exits_1_with_the_reason(root, scope):
    hid = propose_create(root)
    os.symlink(root.parent / "outside", root / "pkg")  # the folder of the new file: now a way out
    how = {"ids": [hid], "--proposal": ["--proposal", "p1"], "--task": ["--task", "t"]}
    args = how.get(scope, ["--file", "pkg/new.py"])
    p = stet("accept", *args, cwd=root)
    if scope == "--file":  # the path given goes through the symlink: refused before any decision
        assert p.returncode == 2 and "OutsideWorkspace" in p.stderr, p.stderr
        assert list((root.parent / "outside").iterdir()) == []
        return
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert f"stet: {hid} did not take effect (stale): " in p.stderr and "is a symlink" in p.stderr, p.stderr
    assert "stale" in p.stdout  # the state is shown as it is
    assert list((root.parent / "outside").iterdir()) == [], "nothing written outside the workspace"

    # The JSON answer says it too; the same decision again (the hunk is stale now) is refused.
    p = stet("accept", hid, "--json", cwd=root)
    assert p.returncode == 1


def test_json_answer_lists_what_did_not_take(root):
    hid = propose_create(root)
    os.symlink(root.parent / "outside", root / "pkg")
    p = stet("accept", hid, "--json", "--request-id", "r1", cwd=root)
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert [h["status"] for h in out["hunks"]] == ["stale"]
    (missed,) = out["notTaken"]
    assert missed["hunkId"] == hid and missed["status"] == "stale" and "is a symlink" in missed["why"]
    # A replay of the same request answers the same, exit code included.
    again = stet("accept", hid, "--json", "--request-id", "r1", cwd=root)
    assert again.returncode == 1 and json.loads(again.stdout)["notTaken"] == out["notTaken"]


def test_an_undo_that_leaves_the_hunk_stale_exits_1(root):
    (root / "x.py").write_text("a\nx\nb\n")
    patch = "--- a/x.py\n+++ b/x.py\n@@ -2 +2 @@\n-x\n+y\n"
    (hid,) = [h["id"] for h in stet_json("propose", "--patch", "-", cwd=root, input=patch)["hunks"]]
    assert stet_json("accept", hid, cwd=root)["notTaken"] == []
    (root / "x.py").write_text("a\nz\nb\n")  # someone changed the line since
    p = stet("undo", hid, cwd=root)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert f"stet: {hid} did not take effect (stale): " in p.stderr


def test_decisions_that_took_exit_0(root):
    (root / "x.py").write_text("a\nx\nb\n")
    patch = "--- a/x.py\n+++ b/x.py\n@@ -2 +2 @@\n-x\n+y\n"
    (hid,) = [h["id"] for h in stet_json("propose", "--patch", "-", cwd=root, input=patch)["hunks"]]
    for action in ("accept", "undo", "reject"):
        p = stet(action, hid, cwd=root)
        assert p.returncode == 0 and "did not take" not in p.stderr, (action, p.stderr)


async def test_the_language_server_says_an_accept_did_not_take(root):
    stet("init", cwd=root)
    dev = Session(root)
    await dev.start()
    try:
        answer = await dev.request("stet/propose", {"proposalId": "p1", "edit": create_edit(root, "pkg/new.py")})
        (hid,) = [h["id"] for h in answer["hunks"]]
        os.symlink(root.parent / "outside", root / "pkg")
        result = await dev.command("stet.accept", {"hunkIds": [hid]})
        assert [h["status"] for h in result["hunks"]] == ["stale"], "the answer is the hunk's state, as before"
        (missed,) = result["notTaken"]
        assert missed["hunkId"] == hid and "is a symlink" in missed["why"]
        deadline = asyncio.get_running_loop().time() + 10
        while not any(hid in m.message for m in dev.messages):
            assert asyncio.get_running_loop().time() < deadline, dev.messages
            await asyncio.sleep(0.05)
        (shown,) = [m for m in dev.messages if hid in m.message]
        assert shown.type == 2 and "did not take effect" in shown.message  # Warning
        assert list((root.parent / "outside").iterdir()) == []

        # One that took adds nothing of the kind.
        (root / "ok.py").write_text("a\n")
        u = uri(root / "ok.py")
        edit = {"changes": {u: [{"range": _zero(), "newText": "top\n"}]}}
        (ok,) = (await dev.request("stet/propose", {"proposalId": "p2", "edit": edit}))["hunks"]
        result = await dev.command("stet.accept", {"hunkIds": [ok["id"]]})
        assert [h["status"] for h in result["hunks"]] == ["applied"] and "notTaken" not in result
        assert not any(ok["id"] in m.message for m in dev.messages)
    finally:
        await dev.stop()
