"""Hostile input against the real server: uris that escape the workspace, limits, hostile ids
and feedback, and no network port. Nothing outside the workspace is read or written (the
outside target of a symlink is a FIFO: opening it for reading would hang the request), the
store is unchanged by what is refused, and what is accepted is stored verbatim."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest
from test_fuzz import fingerprint

from support.harness import rng, write
from support.rawlsp import RawServer

A_TEXT = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def world(tmp_path):
    """A workspace and, beside it, an outside folder with a secret, a FIFO and symlinks to them."""
    ws = tmp_path / "ws"
    out = tmp_path / "outside"
    ws.mkdir()
    out.mkdir()
    write(ws / "a.py", A_TEXT)
    write(out / "secret.txt", "top secret\n")
    os.mkfifo(out / "pipe")
    os.symlink(out / "secret.txt", ws / "link-to-secret.txt")
    os.symlink(out / "pipe", ws / "link-to-pipe.txt")
    os.symlink(out, ws / "link-dir")
    s = RawServer(ws)
    s.initialize()
    yield s, ws, out
    s.kill()


def snapshot(folder) -> dict:
    return {str(p): (p.is_fifo() or p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def outside_uris(ws, out) -> list[str]:
    w = ws.resolve().as_uri()
    return [
        (out / "secret.txt").as_uri(),
        f"{w}/../outside/secret.txt",
        f"{w}/%2e%2e/outside/secret.txt",
        f"{w}/sub/%2E%2E/%2E%2E/outside/secret.txt",
        f"{w}/..%2foutside%2fsecret.txt",
        f"{w}/link-to-secret.txt",
        f"{w}/link-to-pipe.txt",
        f"{w}/link-dir/secret.txt",
        f"{w}/link-dir/pipe",
        "file://otherhost" + str((ws / "a.py").resolve()),
        "file://localhost@evil" + str((ws / "a.py").resolve()),
        "http://example.com" + str((ws / "a.py").resolve()),
        "untitled:Untitled-1",
        "vscode-remote://ssh-remote+x" + str((ws / "a.py").resolve()),
        "file:///etc/passwd",
        "file:///proc/self/environ",
        "file:///dev/zero",
        f"{w}/a.py%00.txt",
    ]


def test_uris_escaping_the_workspace_are_refused_and_nothing_outside_is_touched(world):
    s, ws, out = world
    before_out, before_store = snapshot(out), fingerprint(ws)
    uris = outside_uris(ws, out)
    for u in uris:
        edit = {"changes": {u: [{"range": rng(0, 0, 1, 0), "newText": "pwned\n"}]}}
        answer = s.request("stet/propose", {"proposalId": "evil", "edit": edit}, timeout=30)
        assert answer.get("error", {}).get("code") in (-32003, -32602), (u, answer)
        if answer["error"]["code"] == -32602:  # only for a uri that does not even parse as a path
            assert "uri" in answer["error"]["message"] or "not" in answer["error"]["message"], (u, answer)
        assert "top secret" not in str(answer)
        # One bad uri among good ones refuses the whole proposal.
        mixed = {"changes": {(ws / "a.py").resolve().as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "ok\n"}], u: []}}
        answer = s.request("stet/propose", {"proposalId": "mixed", "edit": mixed}, timeout=30)
        assert "error" in answer, (u, answer)
        for command in ("stet.acceptFile", "stet.rejectFile"):
            answer = s.request("workspace/executeCommand", {"command": command, "arguments": [{"uri": u}]}, timeout=30)
            assert answer.get("error", {}).get("code") in (-32003, -32602), (u, answer)
        s.notify("textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "x", "version": 1, "text": "x"}})
    assert s.alive()
    assert snapshot(out) == before_out
    assert fingerprint(ws) == before_store


def test_the_same_file_by_other_names_is_one_file(world):
    s, ws, _ = world
    os.symlink(ws / "a.py", ws / "alias.py")
    w = ws.resolve().as_uri()
    names = [f"{w}/a.py", f"{w}/./a.py", f"{w}/sub/../a.py", f"{w}/%61.py", f"{w}/alias.py"]
    hunks = []
    for i, u in enumerate(names):
        edit = {"changes": {u: [{"range": rng(2 * i, 0, 2 * i + 1, 0), "newText": f"N{i}\n"}]}}
        hunks += s.call("stet/propose", {"proposalId": f"p{i}", "edit": edit})["hunks"]
    assert {h["uri"] for h in hunks} == {(ws / "a.py").resolve().as_uri()}
    s.call("workspace/executeCommand", {"command": "stet.acceptAll", "arguments": [{}]})
    text = (ws / "a.py").read_text()
    assert all(text.count(f"N{i}\n") == 1 for i in range(len(names)))
    assert os.path.islink(ws / "alias.py")  # the symlink is left a symlink


def test_limits_refuse_with_clear_errors_and_store_nothing(world):
    s, ws, _ = world
    before = fingerprint(ws)
    u = (ws / "a.py").resolve().as_uri()
    big = "x" * (10 * 1024 * 1024 + 1)
    cases = {
        "one huge line": {"changes": {u: [{"range": rng(0, 0, 1, 0), "newText": big + "\n"}]}},
        "many small edits": {
            "changes": {
                u: [{"range": rng(0, 0, 0, 0), "newText": "y" * (1 << 20) + "\n"}]
                + [{"range": rng(i, 0, i, 0), "newText": "y" * (1 << 20) + "\n"} for i in range(1, 11)]
            }
        },
    }
    for name, edit in cases.items():
        answer = s.request("stet/propose", {"proposalId": name, "edit": edit}, timeout=60)
        assert answer["error"]["code"] == -32004, (name, answer["error"])
        assert "limit" in answer["error"]["message"]
    long_id = "p" * 257
    answer = s.request("stet/propose", {"proposalId": long_id, "edit": {"changes": {u: []}}})
    assert answer["error"]["code"] == -32602 and "256" in answer["error"]["message"]
    assert fingerprint(ws) == before
    assert s.alive()


HOSTILE = [
    "'; DROP TABLE hunks; --",
    'Robert"); DELETE FROM oplog; --',
    "a\x00b",
    "\x00",
    "emoji 😀 and ü and \u202e right-to-left",
    " leading and trailing ",
    "line\nbreak\r\nand\ttab",
    "%s%s%s %n {0} ${HOME} $(id) `id`",
    "../../etc/passwd",
]


def test_hostile_ids_and_feedback_are_stored_verbatim_and_never_executed(world):
    s, ws, _ = world
    u = (ws / "a.py").resolve().as_uri()
    expected = {}
    for i, text in enumerate(HOSTILE):
        pid = f"{text}#{i}"
        edit = {"changes": {u: [{"range": rng(i, 0, i + 1, 0), "newText": f"H{i}\n"}]}}
        (h,) = s.call(
            "stet/propose", {"proposalId": pid, "edit": edit, "taskId": text, "agent": text, "message": text}
        )["hunks"]
        assert h["proposalId"] == pid and h["taskId"] == text and h["message"] == text
        feedback = text * (1 if i else 20000)  # one of them ~460 KB
        res = s.call(
            "workspace/executeCommand",
            {"command": "stet.reject", "arguments": [{"hunkIds": [h["id"]], "feedback": feedback, "requestId": pid}]},
        )
        assert res["hunks"][0]["feedback"] == feedback
        expected[h["id"]] = (pid, text, feedback)
    s.stop()
    s2 = RawServer(ws)
    try:
        s2.initialize()
        got = {h["id"]: (h["proposalId"], h["taskId"], h["feedback"]) for h in s2.call("stet/listHunks", {})["hunks"]}
        assert got == expected
        for hid, (pid, _, _) in expected.items():  # the requestId is the replay key, verbatim
            again = s2.call(
                "workspace/executeCommand",
                {"command": "stet.reject", "arguments": [{"hunkIds": [hid], "requestId": pid}]},
            )
            assert again["hunks"][0]["feedback"] == expected[hid][2]
    finally:
        s2.kill()
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"hunks", "oplog", "proposals", "effects"} <= tables
        assert con.execute("SELECT COUNT(*) FROM hunks").fetchone()[0] == len(HOSTILE)
        stored = {r[0] for r in con.execute("SELECT op_id FROM oplog")}
        assert {v[0] for v in expected.values()} <= stored
    finally:
        con.close()


def _inet_inodes(pid: int) -> set[str]:
    inodes = set()
    for table in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6", "udplite", "udplite6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                inodes.update(line.split()[9] for line in f if line.strip())
        except FileNotFoundError:
            continue
    return inodes


def test_the_server_opens_no_network_socket(world):
    s, ws, _ = world
    u = (ws / "a.py").resolve().as_uri()
    s.call(
        "stet/propose", {"proposalId": "p", "edit": {"changes": {u: [{"range": rng(0, 0, 1, 0), "newText": "x\n"}]}}}
    )
    s.call("workspace/executeCommand", {"command": "stet.acceptAll", "arguments": [{}]})
    pid = s.proc.pid
    sockets = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            sockets.add(target[len("socket:[") : -1])
    inet = _inet_inodes(pid)
    assert inet is not None
    assert not sockets & inet, f"the server holds internet sockets: {sockets & inet}"
    assert s.alive()


def _patch(old_path: str, new_path: str) -> str:
    return f"--- {old_path}\n+++ {new_path}\n@@ -1 +1 @@\n-top secret\n+pwned\n"


def test_hostile_inbox_files_fail_with_a_reason_and_touch_nothing_outside(world):
    """Files an agent drops into .stet/inbox/: paths that escape, junk JSON, odd names. Each
    one ends in failed/ beside an .error file (or is ignored), nothing outside is changed, no
    hunk outside the workspace is stored, and the server goes on answering."""
    s, ws, out = world
    inbox = ws / ".stet" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    w = ws.resolve().as_uri()
    secret = str((out / "secret.txt").resolve())
    drops = {
        "dotdot.patch": _patch("a/../outside/secret.txt", "b/../outside/secret.txt"),
        "absolute.patch": _patch(f"a{secret}", f"b{secret}"),
        "bare-absolute.patch": _patch(secret, secret),
        "symlink.patch": _patch("a/link-dir/secret.txt", "b/link-dir/secret.txt"),
        "link-file.patch": _patch("a/link-to-secret.txt", "b/link-to-secret.txt"),
        "create-outside.patch": "--- /dev/null\n+++ b/../outside/new.txt\n@@ -0,0 +1 @@\n+planted\n",
        "outside-uri.json": json.dumps(
            {"edit": {"changes": {(out / "secret.txt").as_uri(): [{"range": rng(0, 0, 1, 0), "newText": "pwned\n"}]}}}
        ),
        "encoded.json": json.dumps(
            {
                "edit": {
                    "changes": {f"{w}/%2e%2e/outside/secret.txt": [{"range": rng(0, 0, 1, 0), "newText": "pwned\n"}]}
                }
            }
        ),
        "create-outside.json": json.dumps(
            {"edit": {"documentChanges": [{"kind": "create", "uri": (out / "planted.txt").as_uri()}]}}
        ),
        "rename-out.json": json.dumps(
            {
                "edit": {
                    "documentChanges": [
                        {"kind": "rename", "oldUri": f"{w}/a.py", "newUri": (out / "stolen.py").as_uri()}
                    ]
                }
            }
        ),
        "junk.json": '{"edit": [1, 2, 3]}',
        "not-json.json": "{{{{",
        "deep.json": "[" * 50000 + "]" * 50000,
        "wrong-id.json": json.dumps({"proposalId": "other", "edit": {"changes": {}}}),
        "binary.patch": "\x00\x01\x02 not a patch",
    }
    before_out, before_a = snapshot(out), (ws / "a.py").read_bytes()
    for name, text in drops.items():
        tmp = inbox / (name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, inbox / name)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any((inbox / n).exists() for n in drops):
        time.sleep(0.2)
    left = [n for n in drops if (inbox / n).exists()]
    assert not left, f"never ingested: {left}"
    failed = inbox / "failed"
    for name in drops:
        assert (failed / name).exists(), f"{name} was not refused"
        assert (failed / (name.rsplit(".", 1)[0] + ".error")).read_text().strip(), name
    assert s.alive()
    assert snapshot(out) == before_out and not (out / "new.txt").exists() and not (out / "planted.txt").exists()
    assert (ws / "a.py").read_bytes() == before_a
    hunks = s.call("stet/listHunks", {})["hunks"]
    assert all(h["uri"].startswith(w + "/") for h in hunks), hunks
