"""The scripted model the real agents run against (tests/support/scripted_model.py): its streams are
framed as the vendors frame them, a tool call's input survives being streamed in pieces, and it
answers turns from its script and side requests harmlessly, logging every request."""

from __future__ import annotations

import json
import urllib.request

from support.scripted_model import (
    ScriptedModel,
    Step,
    anthropic_events,
    chat_chunks,
    responses_events,
    sse,
    text,
    tool,
)

EDIT = {"file_path": "/w/a.py", "old_string": "x = 1", "new_string": 'x = "two"'}


def parse(stream: bytes) -> list[tuple[str | None, dict]]:
    """Server-sent events back into (event, data): each ends with a blank line, one data line each."""
    raw = stream.decode()
    assert raw.endswith("\n\n")
    events = []
    for chunk in raw[:-2].split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.split("\n"))
        assert set(lines) <= {"event", "data"}
        events.append((lines.get("event"), json.loads(lines["data"])))
    return events


def test_an_event_is_one_data_line_of_json_and_a_blank_line():
    assert sse("message_stop", {"type": "message_stop"}) == b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    assert sse(None, {"a": "x\ny"}) == b'data: {"a":"x\\ny"}\n\n'


def test_anthropic_stream_of_a_tool_call_carries_its_input_in_json_pieces():
    events = parse(b"".join(anthropic_events(tool("Edit", EDIT), "m", "msg_1", "toolu_1")))
    names = [e for e, _ in events]
    assert names[:2] == ["message_start", "content_block_start"] and names[-3:] == [
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    start = events[1][1]["content_block"]
    assert start == {"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {}}
    pieces = [d["delta"]["partial_json"] for e, d in events if e == "content_block_delta"]
    assert len(pieces) == 2 and json.loads("".join(pieces)) == EDIT
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_stream_of_a_text_ends_the_turn():
    events = parse(b"".join(anthropic_events(text("done"), "m", "msg_1", "toolu_1")))
    (delta,) = [d["delta"] for e, d in events if e == "content_block_delta"]
    assert delta == {"type": "text_delta", "text": "done"}
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_responses_stream_offers_the_tool_as_it_was_offered():
    custom = parse(b"".join(responses_events(tool("apply_patch", "*** Begin Patch"), "custom", "r1", "c1")))
    assert [e for e, _ in custom] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    item = custom[2][1]["item"]
    assert (item["type"], item["name"], item["input"], item["call_id"]) == (
        "custom_tool_call",
        "apply_patch",
        "*** Begin Patch",
        "c1",
    )
    function = parse(b"".join(responses_events(tool("shell", {"command": ["ls"]}), "function", "r1", "c1")))
    item = function[2][1]["item"]
    assert item["type"] == "function_call" and json.loads(item["arguments"]) == {"command": ["ls"]}
    message = parse(b"".join(responses_events(text("done"), "function", "r1", "c1")))
    assert [d["delta"] for e, d in message if e == "response.output_text.delta"] == ["done"]
    assert message[-1][1]["response"]["usage"]["total_tokens"] == 15


def test_chat_completions_chunks_carry_one_tool_call_in_pieces():
    chunks = chat_chunks(tool("edit", EDIT), "m", "c1", "call_1")
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0]["id"] == "call_1" and calls[0]["function"]["name"] == "edit"
    assert json.loads("".join(c["function"]["arguments"] for c in calls)) == EDIT
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["usage"]["total_tokens"] == 15
    said = chat_chunks(text("done"), "m", "c1", "call_1")
    assert [c["choices"][0]["delta"].get("content") for c in said] == ["", "done", None]
    assert said[-1]["choices"][0]["finish_reason"] == "stop"


def post(url: str, body: dict) -> bytes:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read()


def test_turns_follow_the_script_and_side_requests_use_no_step():
    with ScriptedModel() as model:
        model.play([tool("Edit", EDIT), lambda body: text(f"{len(body['messages'])} messages")])
        turn = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "Edit"}]}
        side = post(model.url + "/v1/messages", {"model": "m", "messages": [], "max_tokens": 1})
        assert json.loads(side)["content"] == [{"type": "text", "text": "ok"}]
        assert json.loads(post(model.url + "/v1/messages/count_tokens", turn)) == {"input_tokens": 10}
        first = json.loads(post(model.url + "/v1/messages", turn))
        assert first["content"][0]["input"] == EDIT and first["stop_reason"] == "tool_use"
        streamed = parse(post(model.url + "/v1/messages", {**turn, "stream": True}))
        assert streamed[2][1]["delta"]["text"] == "1 messages"
        last = json.loads(post(model.url + "/v1/messages", turn))
        assert last["content"] == [{"type": "text", "text": "done"}]
        assert [r.main for r in model.requests] == [False, False, True, True, True]
        assert [r.answer for r in model.turns()] == [tool("Edit", EDIT), text("1 messages"), Step(text="done")]
        model.play([text("chat")])
        raw = post(model.url + "/v1/chat/completions", {"messages": [], "tools": [{}], "stream": True}).decode()
        assert raw.endswith("data: [DONE]\n\n")
        assert parse(raw.removesuffix("data: [DONE]\n\n").encode())[1][1]["choices"][0]["delta"]["content"] == "chat"
