"""Fuzzing the real server over stdio: broken framing, invalid JSON, invalid envelopes, and
hypothesis-generated requests with wrong types, missing fields, huge numbers, positions past
the end, lone surrogates, odd uris and nested junk.

For every request an answer is due: a JSON-RPC error (or, for a read that is still valid, a
result), never silence and never an internal error; the server keeps answering; and the store
and the workspace are exactly as they were (a fingerprint of both is compared)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import rng, write
from rawlsp import RawServer

A_TEXT = "".join(f"line {i}\n" for i in range(1, 21))
ALLOWED = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004}
FUZZ_CASES = {"count": 0}


def fingerprint(ws) -> str:
    """The store's decisions and the workspace's files (positions left out: they are a cache)."""
    h = hashlib.sha256()
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        for table, cols in (("hunks", "id, status, version, feedback, applied_text, decided_at"),
                            ("oplog", "lsn, op_id, kind, args"), ("proposals", "id, edit_hash"),
                            ("effects", "id, state, attempts")):
            for row in con.execute(f"SELECT {cols} FROM {table} ORDER BY 1"):
                h.update(repr(row).encode())
    finally:
        con.close()
    for p in sorted(ws.rglob("*")):
        if p.is_file() and ".stet" not in p.parts:
            h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    ws = tmp_path_factory.mktemp("fuzz") / "ws"
    ws.mkdir()
    a = write(ws / "a.py", A_TEXT)
    write(ws / "sub" / "b.txt", "alpha\nbeta\n")
    s = RawServer(ws)
    s.initialize()
    edit = {"changes": {a.resolve().as_uri(): [{"range": rng(1, 0, 2, 0), "newText": "TWO\n"},
                                               {"range": rng(5, 0, 6, 0), "newText": "SIX\n"},
                                               {"range": rng(9, 0, 10, 0), "newText": "TEN\n"}]}}
    ids = [h["id"] for h in s.call("stet/propose", {"proposalId": "p1", "edit": edit})["hunks"]]
    s.call("workspace/executeCommand", {"command": "stet.accept", "arguments": [{"hunkIds": [ids[1]]}]})
    s.call("workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": [ids[2]], "feedback": "no"}]})
    yield s, ws, ids
    assert s.alive()
    code = s.stop()
    assert code == 0, s.tail()


def expect_error(answer: dict, *codes: int) -> dict:
    assert "error" in answer, answer
    assert answer["error"]["code"] in (codes or ALLOWED), answer
    return answer["error"]


# --- framing and envelopes: each on its own server, the stream may be left desynchronised ---
def fresh(ws) -> RawServer:
    s = RawServer(ws)
    s.initialize()
    return s


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    write(root / "a.py", A_TEXT)
    return root


def answered_again(s: RawServer, tries: int = 3) -> bool:
    """The server answers one of a few plain requests (a broken frame may swallow one)."""
    ids = []
    for i in range(tries):
        ids.append(f"again-{i}-{time.monotonic_ns()}")
        s.send({"jsonrpc": "2.0", "id": ids[-1], "method": "stet/listHunks", "params": {}})
    for msg_id in ids:
        try:
            return "result" in s.wait_answer(msg_id, timeout=5)
        except TimeoutError:
            continue
    return False


ENVELOPES = {
    "invalid JSON": (b"{not json", -32700, None),
    "invalid UTF-8": (b'{"jsonrpc": "2.0", "id": 1, "method": "stet/listHunks", "params": {"uri": "\xff\xfe"}}', -32700, None),
    "deep nesting": (b'{"jsonrpc":"2.0","id":"deep","method":"stet/listHunks","params":' + b"[" * 100000 + b"]" * 100000 + b"}", -32700, None),
    "a number": (b"5", -32600, None),
    "a batch": (json.dumps([{"jsonrpc": "2.0", "id": "b1", "method": "stet/listHunks", "params": {}}]).encode(), -32600, None),
    "no jsonrpc": (json.dumps({"id": "j0", "method": "stet/listHunks", "params": {}}).encode(), -32600, "j0"),
    "jsonrpc 1.0": (json.dumps({"jsonrpc": "1.0", "id": "j1", "method": "stet/listHunks", "params": {}}).encode(), -32600, "j1"),
    "method not a string": (json.dumps({"jsonrpc": "2.0", "id": "m1", "method": 5, "params": {}}).encode(), -32600, "m1"),
    "id an object": (json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "stet/listHunks", "params": {}}).encode(), -32600, None),
    "id a boolean": (json.dumps({"jsonrpc": "2.0", "id": True, "method": "stet/listHunks", "params": {}}).encode(), -32600, None),
    "lone surrogate": (b'{"jsonrpc":"2.0","id":"s1","method":"stet/listHunks","params":{"uri":"file:///x\\ud800"}}', -32602, "s1"),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
def test_malformed_envelope_gets_an_error_and_the_server_goes_on(ws, name):
    body, code, msg_id = ENVELOPES[name]
    s = fresh(ws)
    try:
        before = fingerprint(ws)
        s.send(body)
        answer = s.wait_answer(msg_id, timeout=10)
        assert answer["error"]["code"] == code, answer
        assert answer["id"] == msg_id
        assert s.alive()
        assert fingerprint(ws) == before
    finally:
        s.kill()


FRAMES = {
    "length not a number": b"Content-Length: abc\r\n\r\n{}",
    "negative length": b"Content-Length: -5\r\n\r\n{}",
    "length too short": b'Content-Length: 5\r\n\r\n{"jsonrpc": "2.0", "id": "x", "method": "stet/listHunks"}',
    "no length": b'Content-Type: application/json\r\n\r\n{"jsonrpc": "2.0"}',
    "garbage lines": b"hello\r\nworld\r\n\r\n\r\n",
    "bare newlines": b'Content-Length: 2\n\n{}',
    "binary junk": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("name", list(FRAMES))
def test_broken_framing_never_stops_the_server(ws, name):
    s = fresh(ws)
    try:
        before = fingerprint(ws)
        s.send_bytes(FRAMES[name])
        assert answered_again(s), s.tail()
        assert fingerprint(ws) == before
    finally:
        s.kill()


@pytest.mark.parametrize("tail", [b'Content-Length: 50\r\n\r\n{"jsonrpc": "2.0", "id"', b"Content-Length: 99999999999\r\n\r\n{}"])
def test_truncated_input_then_end_of_stream_lets_the_server_exit(ws, tail):
    s = fresh(ws)
    try:
        s.send_bytes(tail)
        s.proc.stdin.close()
        s.proc.wait(timeout=15)  # exits by itself: no hang on a half message, no crash on a huge length
    finally:
        s.kill()


def test_requests_after_shutdown_are_refused_not_ignored(ws):
    s = fresh(ws)
    try:
        assert "result" in s.request("shutdown", None)
        expect_error(s.request("stet/listHunks", {}, timeout=10), -32600)
        s.notify("exit", None)
        assert s.proc.wait(timeout=15) == 0
    finally:
        s.kill()
