"""A command runs as a call (stet/cli/call.py): its folder, environment and streams are the
call's, never the process's, so a command runs in-process with its own folder and captured
output, and calls that only read run side by side in one event loop."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from support.calls import stet_here, stet_in


def _workspace(root, name: str, text: str):
    root.mkdir()
    (root / name).write_text(text)
    (root / "sub").mkdir()
    return root


def _patch(name: str, old: str, new: str) -> bytes:
    return f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-{old}\n+{new}\n".encode()


def test_a_command_runs_in_its_own_folder_with_its_output_captured(tmp_path):
    ws = _workspace(tmp_path / "ws", "a.txt", "one\n")
    here, out = os.getcwd(), sys.stdout
    made = stet_here(["propose", "--patch", "-", "--json"], ws, stdin=_patch("a.txt", "one", "uno"))
    assert made.code == 0, made.err
    hunk = json.loads(made.out)["hunks"][0]["id"]
    # From a folder below the workspace, the store is found above it, and --file is the caller's path.
    shown = stet_here(["status", "--json", "--file", "../a.txt"], ws / "sub")
    assert shown.code == 0, shown.err
    assert [h["id"] for h in json.loads(shown.out)["hunks"]] == [hunk]
    assert (ws / ".stet" / "stet.db").exists()
    assert os.getcwd() == here and sys.stdout is out  # nothing of the process was changed


def test_errors_and_usage_go_to_the_calls_stderr(tmp_path):
    ws = _workspace(tmp_path / "ws", "a.txt", "one\n")
    nothing = stet_here(["status"], ws)
    assert nothing.code == 2 and "no Stet store found in" in nothing.err and str(ws) in nothing.err
    usage = stet_here(["status", "--bogus"], ws)
    assert usage.code == 2 and "unrecognized arguments: --bogus" in usage.err and usage.out == ""
    helped = stet_here(["show", "--help"], ws)
    assert helped.code == 0 and "usage: stet show" in helped.out
    gone = stet_here(["status"], tmp_path / "not-there")
    assert gone.code == 2 and "the current folder no longer exists" in gone.err


async def test_two_reading_calls_run_at_once_each_in_its_folder(tmp_path):
    a = _workspace(tmp_path / "a", "a.txt", "one\n")
    b = _workspace(tmp_path / "b", "b.txt", "two\n")
    made = await asyncio.gather(
        stet_in(["propose", "--patch", "-", "--json"], a, stdin=_patch("a.txt", "one", "uno")),
        stet_in(["propose", "--patch", "-", "--json"], b, stdin=_patch("b.txt", "two", "dos")),
    )
    assert [m.code for m in made] == [0, 0], [m.err for m in made]
    ids = [json.loads(m.out)["hunks"][0]["id"] for m in made]
    read = await asyncio.gather(
        stet_in(["show", ids[0], "--json"], a / "sub"),
        stet_in(["show", ids[1], "--json"], b / "sub"),
        stet_in(["log", "--json"], a),
        stet_in(["log", "--json"], b),
        stet_in(["status", "--json", "--file", "b.txt"], b),
    )
    assert all(r.code == 0 for r in read), [r.err for r in read]
    shown_a, shown_b, log_a, log_b, status_b = (json.loads(r.out) for r in read)
    assert shown_a["new"] == ["uno\n"] and shown_b["new"] == ["dos\n"]
    assert [o["args"]["proposalId"] for o in log_a["ops"]] == [json.loads(made[0].out)["proposalId"]]
    assert [o["args"]["proposalId"] for o in log_b["ops"]] == [json.loads(made[1].out)["proposalId"]]
    assert [h["id"] for h in status_b["hunks"]] == [ids[1]]
    # A hunk of the other workspace is unknown here.
    other = await stet_in(["show", ids[1]], a)
    assert other.code == 1 and "unknown hunk" in other.err
