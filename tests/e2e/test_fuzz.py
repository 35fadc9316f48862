"""Fuzzing the real server over stdio: broken framing, invalid JSON, invalid envelopes, and
hypothesis-generated requests with wrong types, missing fields, huge numbers, positions past
the end, lone surrogates, odd uris and nested junk.

For every request an answer is due: a JSON-RPC error (or, for a read that is still valid, a
result), never silence and never an internal error; the server keeps answering; and the store
and the workspace are exactly as they were (a fingerprint of both is compared)."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.fuzzgen import BAD_INT, BAD_OPT_STR, JUNK, NOT_STR, ODD_URIS, fingerprint, mutations_of_propose
from support.harness import rng, write
from support.rawlsp import RawServer

A_TEXT = "".join(f"line {i}\n" for i in range(1, 21))
ALLOWED = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004}
FUZZ_CASES = {"count": 0}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    ws = tmp_path_factory.mktemp("fuzz") / "ws"
    ws.mkdir()
    a = write(ws / "a.py", A_TEXT)
    write(ws / "sub" / "b.txt", "alpha\nbeta\n")
    s = RawServer(ws)
    s.initialize()
    edit = {
        "changes": {
            a.resolve().as_uri(): [
                {"range": rng(1, 0, 2, 0), "newText": "TWO\n"},
                {"range": rng(5, 0, 6, 0), "newText": "SIX\n"},
                {"range": rng(9, 0, 10, 0), "newText": "TEN\n"},
            ]
        }
    }
    ids = [h["id"] for h in s.call("stet/propose", {"proposalId": "p1", "edit": edit})["hunks"]]
    s.call("workspace/executeCommand", {"command": "stet.accept", "arguments": [{"hunkIds": [ids[1]]}]})
    s.call(
        "workspace/executeCommand", {"command": "stet.reject", "arguments": [{"hunkIds": [ids[2]], "feedback": "no"}]}
    )
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
    deadline = time.monotonic() + 30  # generous: a busy machine answers late, not never
    while time.monotonic() < deadline:
        for msg_id in ids:
            try:
                return "result" in s.wait_answer(msg_id, timeout=0.1)
            except TimeoutError:
                continue
    return False


ENVELOPES = {
    "invalid JSON": (b"{not json", -32700, None),
    "invalid UTF-8": (
        b'{"jsonrpc": "2.0", "id": 1, "method": "stet/listHunks", "params": {"uri": "\xff\xfe"}}',
        -32700,
        None,
    ),
    "deep nesting": (
        b'{"jsonrpc":"2.0","id":"deep","method":"stet/listHunks","params":' + b"[" * 100000 + b"]" * 100000 + b"}",
        -32700,
        None,
    ),
    "a number": (b"5", -32600, None),
    "a batch": (
        json.dumps([{"jsonrpc": "2.0", "id": "b1", "method": "stet/listHunks", "params": {}}]).encode(),
        -32600,
        None,
    ),
    "no jsonrpc": (json.dumps({"id": "j0", "method": "stet/listHunks", "params": {}}).encode(), -32600, "j0"),
    "jsonrpc 1.0": (
        json.dumps({"jsonrpc": "1.0", "id": "j1", "method": "stet/listHunks", "params": {}}).encode(),
        -32600,
        "j1",
    ),
    "method not a string": (
        json.dumps({"jsonrpc": "2.0", "id": "m1", "method": 5, "params": {}}).encode(),
        -32600,
        "m1",
    ),
    "id an object": (
        json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "stet/listHunks", "params": {}}).encode(),
        -32600,
        None,
    ),
    "id a boolean": (
        json.dumps({"jsonrpc": "2.0", "id": True, "method": "stet/listHunks", "params": {}}).encode(),
        -32600,
        None,
    ),
    "lone surrogate": (
        b'{"jsonrpc":"2.0","id":"s1","method":"stet/listHunks","params":{"uri":"file:///x\\ud800"}}',
        -32602,
        "s1",
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
def test_malformed_envelope_gets_an_error_and_the_server_goes_on(ws, name):
    body, code, msg_id = ENVELOPES[name]
    s = fresh(ws)
    try:
        before = fingerprint(ws)
        s.send(body)
        answer = s.wait_answer(msg_id, timeout=30)
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
    "bare newlines": b"Content-Length: 2\n\n{}",
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


@pytest.mark.parametrize(
    "tail", [b'Content-Length: 50\r\n\r\n{"jsonrpc": "2.0", "id"', b"Content-Length: 99999999999\r\n\r\n{}"]
)
def test_truncated_input_then_end_of_stream_lets_the_server_exit(ws, tail):
    s = fresh(ws)
    try:
        s.send_bytes(tail)
        s.proc.stdin.close()
        s.proc.wait(timeout=60)  # exits by itself: no hang on a half message, no crash on a huge length
    finally:
        s.kill()


def test_requests_after_shutdown_are_refused_not_ignored(ws):
    s = fresh(ws)
    try:
        assert "result" in s.request("shutdown", None)
        expect_error(s.request("stet/listHunks", {}, timeout=30), -32600)
        s.notify("exit", None)
        assert s.proc.wait(timeout=60) == 0
    finally:
        s.kill()


# --- hypothesis: requests with one thing wrong -------------------------------------------
def decision_mutations(ids: list[str]):
    pending, applied, rejected = ids
    cmd = st.sampled_from(["stet.accept", "stet.reject", "stet.undo"])

    def one(command, params):
        return {"command": command, "arguments": [params]}

    return st.one_of(
        st.tuples(
            st.just("hunkIds"),
            cmd,
            JUNK.filter(lambda v: not (isinstance(v, list) and v and all(isinstance(i, str) and i for i in v))),
        ).map(lambda t: (t[0], one(t[1], {"hunkIds": t[2]}))),
        st.tuples(
            st.just("unknown hunk"),
            cmd,
            st.lists(st.text(min_size=1, max_size=20).filter(lambda t: "\ud800" > t or True), min_size=1, max_size=3),
        ).map(lambda t: (t[0], one(t[1], {"hunkIds": [pending] + ["nope-" + x for x in t[2]]}))),
        st.tuples(st.just("requestId"), cmd, BAD_OPT_STR).map(
            lambda t: (t[0], one(t[1], {"hunkIds": [pending], "requestId": t[2]}))
        ),
        st.tuples(st.just("feedback"), BAD_OPT_STR).map(
            lambda t: (t[0], one("stet.reject", {"hunkIds": [pending], "feedback": t[1]}))
        ),
        st.tuples(st.just("text"), BAD_OPT_STR).map(
            lambda t: (t[0], one("stet.accept", {"hunkIds": [pending], "text": t[1]}))
        ),
        st.tuples(st.just("text, two hunks"), st.text(max_size=5)).map(
            lambda t: (t[0], one("stet.accept", {"hunkIds": [pending, rejected], "text": t[1]}))
        ),
        st.tuples(
            st.just("expectedVersions"),
            JUNK.filter(
                lambda v: (
                    v is not None
                    and not (
                        isinstance(v, dict) and all(isinstance(x, int) and not isinstance(x, bool) for x in v.values())
                    )
                )
            ),
        ).map(lambda t: (t[0], one("stet.accept", {"hunkIds": [pending], "expectedVersions": t[1]}))),
        st.tuples(st.just("stale version"), st.integers(-5, 0) | st.integers(2, 2**62)).map(
            lambda t: (t[0], one("stet.accept", {"hunkIds": [pending], "expectedVersions": {pending: t[1]}}))
        ),
        st.just(("forbidden transition", one("stet.reject", {"hunkIds": [pending, applied]}))),
        st.just(("undo then conflict", one("stet.accept", {"hunkIds": [rejected, pending]}))),
        st.tuples(
            st.just("arguments"),
            JUNK.filter(lambda v: not (isinstance(v, list) and len(v) == 1 and isinstance(v[0], dict))),
        ).map(lambda t: (t[0], {"command": "stet.accept", "arguments": t[1]})),
        st.tuples(
            st.just("file/all scope"), st.sampled_from(["stet.acceptFile", "stet.rejectFile"]), ODD_URIS | NOT_STR
        ).map(lambda t: (t[0], one(t[1], {"uri": t[2]}))),
        st.tuples(st.just("command"), JUNK.filter(lambda v: v not in ("stet.accept",))).map(
            lambda t: (t[0], {"command": t[1], "arguments": [{}]})
        ),
    )


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(data=st.data())
def test_fuzzed_requests_get_errors_and_change_nothing(served, data):
    s, ws, ids = served
    u = (ws / "a.py").resolve().as_uri()
    kind = data.draw(st.sampled_from(["propose", "decision", "list", "lsp"]))
    if kind == "propose":
        what, params = data.draw(mutations_of_propose(u))
        method = "stet/propose"
    elif kind == "decision":
        what, params = data.draw(decision_mutations(ids))
        method = "workspace/executeCommand"
    elif kind == "list":
        what = "listHunks"
        params = data.draw(
            st.one_of(
                JUNK.filter(lambda v: not isinstance(v, dict) and v is not None),
                st.dictionaries(st.sampled_from(["uri", "status", "proposalId", "taskId"]), BAD_OPT_STR, min_size=1),
                st.builds(
                    lambda x: {"status": [x]},
                    st.text(max_size=8).filter(
                        lambda t: t not in ("pending", "accepted", "applied", "rejected", "stale", "superseded")
                    ),
                ),
            )
        )
        method = "stet/listHunks"
    else:
        method = data.draw(st.sampled_from(["textDocument/codeLens", "textDocument/hover", "textDocument/codeAction"]))
        what = method
        params = data.draw(
            st.one_of(
                JUNK,
                st.fixed_dictionaries(
                    {
                        "textDocument": st.one_of(JUNK, st.fixed_dictionaries({"uri": ODD_URIS | NOT_STR})),
                        "position": st.fixed_dictionaries({"line": BAD_INT, "character": BAD_INT}),
                        "range": JUNK,
                        "context": JUNK,
                    }
                ),
            )
        )
    before = fingerprint(ws)
    answer = s.request(method, params, timeout=20)
    FUZZ_CASES["count"] += 1
    if method.startswith("textDocument/") or method == "stet/listHunks":  # reads: a result is fine when still valid
        assert "result" in answer or answer["error"]["code"] in ALLOWED, (what, params, answer)
    else:
        expect_error(answer)
    assert fingerprint(ws) == before, (what, params, answer)


def test_fuzz_figures(served):
    """Runs after the fuzzing above: the server took every case and still answers."""
    s, ws, _ = served
    assert s.alive()
    from support.figures import FIGURES

    FIGURES["fuzzing"] = (
        f"{FUZZ_CASES['count']} hypothesis requests + {len(ENVELOPES)} bad envelopes + {len(FRAMES)} "
        f"broken frames: each answered with an error (or a valid read), store unchanged, violations=0"
    )
