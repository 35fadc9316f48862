"""Stet as a proxy under ACP's conductor: the one stream the conductor speaks becomes the editor's
side and the agent's side the relay knows, and back, in each form of the protocol."""

from __future__ import annotations

import json

from stet.acp.conductor import AGENT, EDITOR, Envelope


def line(body: dict) -> bytes:
    return json.dumps(body).encode()


def body(raw: bytes | None) -> dict:
    assert raw is not None
    return json.loads(raw)


INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}}


def test_the_current_form_initialises_through_the_successor():
    env = Envelope()
    side, raw = env.from_conductor(line({"jsonrpc": "2.0", "id": 0, "method": "_proxy/initialize", "params": INIT}))
    assert side == EDITOR and body(raw) == {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
    out = body(env.to_agent(raw))  # the relay passes initialize on to the "agent"
    assert out["method"] == "_proxy/successor" and out["params"] == {"method": "initialize", "params": INIT}
    assert isinstance(out["id"], str)
    answer = {"protocolVersion": 1, "agentInfo": {"name": "fake"}}
    side, raw = env.from_conductor(line({"jsonrpc": "2.0", "id": out["id"], "result": answer}))
    assert side == AGENT and body(raw) == {"jsonrpc": "2.0", "id": 0, "result": answer}
    plain = line({"jsonrpc": "2.0", "id": 0, "result": answer})
    assert env.to_editor(plain) == plain, "the answer to _proxy/initialize is the plain answer, untouched"


def test_the_predecessor_speaks_plain_and_the_successor_in_the_envelope():
    env = Envelope()
    env.from_conductor(line({"jsonrpc": "2.0", "id": 0, "method": "_proxy/initialize", "params": INIT}))
    prompt = line({"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}})
    assert env.from_conductor(prompt) == (EDITOR, prompt), "plain, byte for byte"
    update = {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}
    side, raw = env.from_conductor(
        line({"jsonrpc": "2.0", "method": "_proxy/successor", "params": {"method": "session/update", "params": update}})
    )
    assert side == AGENT and body(raw) == {"jsonrpc": "2.0", "method": "session/update", "params": update}
    ask = {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": []}
    side, raw = env.from_conductor(
        line(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "_proxy/successor",
                "params": {"method": "session/request_permission", "params": ask},
            }
        )
    )
    assert side == AGENT and body(raw) == {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "session/request_permission",
        "params": ask,
    }
    # the relay sends it to the editor plain (same id); the editor's answer comes back plain
    answer = line({"jsonrpc": "2.0", "id": 9, "result": {"outcome": {"outcome": "cancelled"}}})
    assert env.from_conductor(answer) == (EDITOR, answer)
    # and the relay's answer to the "agent" is the plain answer to the conductor's envelope
    assert env.to_agent(answer) == answer
    notice = body(env.to_agent(line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})))
    assert notice == {
        "jsonrpc": "2.0",
        "method": "_proxy/successor",
        "params": {"method": "session/cancel", "params": {"sessionId": "s"}},
    }


def test_our_ids_to_the_successor_never_meet_the_conductors():
    env = Envelope()
    env.from_conductor(line({"jsonrpc": "2.0", "id": 0, "method": "_proxy/initialize", "params": INIT}))
    first = body(env.to_agent(line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}})))
    second = body(env.to_agent(line({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}})))
    assert first["id"] != second["id"] and all(isinstance(b["id"], str) for b in (first, second))
    # the conductor's own request with id 1 (a successor's request) is not taken for our answer
    side, _ = env.from_conductor(line({"jsonrpc": "2.0", "id": 1, "result": {}}))
    assert side == EDITOR
    side, raw = env.from_conductor(line({"jsonrpc": "2.0", "id": second["id"], "error": {"code": -1, "message": "no"}}))
    assert side == AGENT and body(raw) == {"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "no"}}
    cancel = body(env.to_agent(line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})))
    assert cancel["params"]["params"] == {"requestId": first["id"]}, (
        "a cancel names the request as the successor knows it"
    )


def test_the_proposals_spelling_is_answered_in_kind():
    env = Envelope()
    side, raw = env.from_conductor(line({"jsonrpc": "2.0", "id": "i", "method": "proxy/initialize", "params": INIT}))
    assert side == EDITOR and body(raw)["method"] == "initialize"
    assert body(env.to_agent(raw))["method"] == "proxy/successor"
    side, _ = env.from_conductor(
        line({"jsonrpc": "2.0", "method": "proxy/successor", "params": {"method": "session/update"}})
    )
    assert side == AGENT


def test_the_earlier_form_returns_its_proxy_flag():
    for params, check in (
        ({**INIT, "_meta": {"proxy": True}}, lambda r: r["_meta"]["proxy"] is True),
        (
            {**INIT, "clientCapabilities": {"_meta": {"symposium": {"proxy": True}}}},
            lambda r: r["agentCapabilities"]["_meta"]["symposium"]["proxy"] is True,
        ),
    ):
        env = Envelope()
        init = line({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": params})
        assert env.from_conductor(init) == (EDITOR, init), "the part sees the initialize as sent"
        out = body(env.to_agent(init))
        assert out["method"] == "_proxy/successor/request" and out["params"]["params"] == params
        answer = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
        side, raw = env.from_conductor(line({"jsonrpc": "2.0", "id": out["id"], "result": answer}))
        assert side == AGENT
        back = body(env.to_editor(raw))
        assert back["id"] == 3 and check(back["result"]) and back["result"]["agentCapabilities"]["loadSession"] is True
        note = body(env.to_agent(line({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})))
        assert note["method"] == "_proxy/successor/notification"
        side, _ = env.from_conductor(
            line(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "_proxy/successor/request",
                    "params": {"method": "fs/read_text_file"},
                }
            )
        )
        assert side == AGENT


def test_what_cannot_be_parsed_passes_to_the_editor_and_cannot_go_in_the_envelope():
    env = Envelope()
    assert env.from_conductor(b"not json") == (EDITOR, b"not json")
    assert env.from_conductor(b"[1, 2]") == (EDITOR, b"[1, 2]")
    assert env.to_agent(b"not json") is None and env.unwrappable == 1
    plain_init = line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    assert env.from_conductor(plain_init) == (EDITOR, plain_init), "a plain initialize without the flag: not a proxy"
