"""No write leaves the workspace, even in a race.

The attack, for real: a folder of the workspace flipped by a concurrent thread between the
real folder and a symlink to an outside copy of it while its files' hunks (edits and creates)
are accepted one by one. Nothing outside may change, and every hunk answered `applied` must
be in the workspace's file. (The inbox's own folders made symlinks: test_inbox_hostile_files.py.)"""

from __future__ import annotations

import os
import shutil

import pytest

from support.flipper import Flipper, fingerprint
from support.harness import rng, write
from support.rawlsp import RawServer

LINES = 80


@pytest.fixture
def world(tmp_path):
    ws, out = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    write(ws / "sub" / "f.txt", "".join(f"line {i}\n" for i in range(LINES)))
    shutil.copytree(ws / "sub", out / "copy")  # the attacker's symlink target looks just like it
    (out / "copy" / "user-notes.txt").write_text("the user's own outside file\n")
    return ws, out


def accept(s: RawServer, hid: str) -> dict:
    return s.request("workspace/executeCommand", {"command": "stet.accept", "arguments": [{"hunkIds": [hid]}]})


@pytest.mark.parametrize("two_step", [False, True], ids=["atomic exchange", "two renames"])
def test_a_folder_flipped_to_a_symlink_out_never_gets_a_write(world, two_step):
    ws, out = world
    f = ws / "sub" / "f.txt"
    before = fingerprint(out)
    s = RawServer(ws)
    try:
        s.initialize()
        edits = [{"range": rng(i, 0, i + 1, 0), "newText": f"NEW {i}\n"} for i in range(0, LINES, 2)]
        creates = [
            {"kind": "create", "uri": (ws / "sub" / f"made{i}.txt").as_uri()} for i in range(10)
        ]  # empty files: a create whose folder may be a symlink when it is carried out
        hunks = s.call(
            "stet/propose",
            {
                "proposalId": "race",
                "edit": {
                    "documentChanges": [
                        {"textDocument": {"uri": f.as_uri(), "version": None}, "edits": edits},
                        *creates,
                    ]
                },
            },
        )["hunks"]
        assert len(hunks) == LINES // 2 + 10
        flipper = Flipper(ws / "sub", out / "copy", pause=0.002, two_step=two_step)
        flipper.start()
        answers = {}
        try:
            for h in hunks:  # a bounded number of accepts, each racing the flipper
                answers[h["id"]] = accept(s, h["id"])
        finally:
            flipper.stop()
        assert flipper.flips > 10, flipper.flips  # the race really ran
        assert s.alive()
        assert fingerprint(out) == before, "a write escaped the workspace"
        text = f.read_text()
        applied = 0
        by_id = {h["id"]: h for h in hunks}
        for hid, answer in answers.items():
            h = by_id[hid]
            if "error" in answer:  # refused (stale meanwhile: Conflict): nothing may have happened
                assert answer["error"]["code"] == -32002, answer
                state = "refused"
            else:
                state = answer["result"]["hunks"][0]["status"]
                assert state in ("applied", "stale"), answer
            there = h["newText"] in text if h["kind"] == "edit" else (ws / "sub" / h["uri"].rsplit("/", 1)[1]).exists()
            if state == "applied":
                applied += 1
                assert there, f"{hid} answered applied, but the workspace file lacks it"
            else:
                assert not there, f"{hid} answered {state}, but it was carried out"
        print(f"race: {len(answers)} accepts, {flipper.flips} flips (atomic {flipper.atomic}), {applied} applied")
        assert applied > 0  # some accepts won the race
    finally:
        s.kill()
    # A temp file the flipper's own merging moved away from its write is swept at the next start.
    s = RawServer(ws)
    try:
        s.initialize()
        assert not [n for n in os.listdir(ws / "sub") if "stet-tmp" in n]
        assert fingerprint(out) == before
    finally:
        s.kill()
