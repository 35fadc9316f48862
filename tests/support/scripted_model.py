"""A scripted model server for running the real agent CLIs end to end: it speaks the vendors' APIs
the agents use (Anthropic Messages, OpenAI Responses, Gemini generateContent), streaming included,
and answers each of the agent's turns from a script, logging every request so a test can assert
what the agent sent the model.

A script is a list of steps, each answering one turn of the agent (a request offering tools):
`tool(NAME, INPUT)` calls a tool, `text(TEXT)` ends the turn; a step may also be a function of the
request's body returning one (to aim at a path only known then). When the script is used up the
model says "done". Side requests (token counting, model listing, titles, summaries, quota checks:
anything offering no tools) are answered harmlessly and do not use a step.

    with ScriptedModel() as model:
        model.play([tool("Edit", {...}), text("done")])
        ... ANTHROPIC_BASE_URL=model.url ...
        model.requests  # every request: Request(path, body)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Step:
    """One answer of the model: a tool call (name and input) or a text ending the turn."""

    text: str = ""
    tool: str = ""
    input: Any = None


def tool(name: str, input: Any) -> Step:
    return Step(tool=name, input=input)


def text(words: str) -> Step:
    return Step(text=words)


Scripted = Step | Callable[[dict], Step]


@dataclass
class Request:
    path: str
    body: dict
    main: bool  # a turn of the agent (it offered tools), answered from the script
    answer: Step | None = None


@dataclass
class _State:
    script: list[Scripted] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0


def sse(event: str | None, data: dict) -> bytes:
    """One server-sent event: `event:` (when named), one `data:` line of JSON, a blank line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class ScriptedModel:
    def __init__(self) -> None:
        self.state = _State()
        state = self.state

        class Handler(_Handler):
            shared = state

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def play(self, script: list[Scripted]) -> None:
        """Answer the next turns from `script` (replacing what is left of the previous one)."""
        with self.state.lock:
            self.state.script = list(script)

    @property
    def requests(self) -> list[Request]:
        with self.state.lock:
            return list(self.state.requests)

    def turns(self) -> list[Request]:
        return [r for r in self.requests if r.main]

    def wait(self, predicate: Callable[[list[Request]], bool], timeout: float = 120) -> list[Request]:
        deadline = time.monotonic() + timeout
        while True:
            seen = self.requests
            if predicate(seen) or time.monotonic() > deadline:
                return seen
            time.sleep(0.05)


class _Handler(BaseHTTPRequestHandler):
    shared: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self._log(path, {}, main=False)
        if path.endswith("/models"):
            models = [{"id": "claude-sonnet-4-5", "type": "model", "display_name": "scripted"}]
            self._json({"data": models, "models": [], "has_more": False, "object": "list"})
        else:
            self._json({})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            self._log(path, body, main=False)
            return self._json({"input_tokens": 10})
        if path.endswith(":countTokens"):
            self._log(path, body, main=False)
            return self._json({"totalTokens": 10})
        if path.endswith("/messages"):
            return self._anthropic(path, body)
        if path.endswith("/responses"):
            return self._responses(path, body)
        if path.endswith("/chat/completions"):
            return self._chat(path, body)
        if ":generateContent" in path or ":streamGenerateContent" in path:
            return self._gemini(path, body)
        self._log(path, body, main=False)
        self._json({})

    # The script.

    def _log(self, path: str, body: dict, main: bool) -> Request:
        request = Request(path, body, main)
        with self.shared.lock:
            self.shared.requests.append(request)
        return request

    def _next(self, path: str, body: dict, main: bool) -> Step:
        request = self._log(path, body, main)
        step: Step = text("ok")
        if main:
            with self.shared.lock:
                scripted = self.shared.script.pop(0) if self.shared.script else text("done")
            step = scripted(body) if callable(scripted) else scripted
        request.answer = step
        return step

    def _id(self, prefix: str) -> str:
        with self.shared.lock:
            self.shared.counter += 1
            return f"{prefix}{self.shared.counter:024d}"

    # Writing answers.

    def _json(self, data: dict, status: int = 200) -> None:
        out = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def _stream(self, events: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for chunk in events:
            self.wfile.write(chunk)
            self.wfile.flush()

    # Anthropic Messages (Claude Code).

    def _anthropic(self, path: str, body: dict) -> None:
        step = self._next(path, body, main=bool(body.get("tools")))
        model = body.get("model", "claude-sonnet-4-5")
        if body.get("stream"):
            return self._stream(anthropic_events(step, model, self._id("msg_"), self._id("toolu_")))
        self._json(anthropic_message(step, model, self._id("msg_"), self._id("toolu_")))

    # OpenAI Responses (Codex).

    def _responses(self, path: str, body: dict) -> None:
        step = self._next(path, body, main=bool(body.get("tools")))
        kinds = {t.get("name"): t.get("type") for t in body.get("tools") or []}
        events = responses_events(step, kinds.get(step.tool, "function"), self._id("resp_"), self._id("call_"))
        if body.get("stream", True):
            return self._stream(events)
        self._json({"id": "resp", "output": []})

    # OpenAI Chat Completions (Qwen Code and the other OpenAI-compatible agents).

    def _chat(self, path: str, body: dict) -> None:
        step = self._next(path, body, main=bool(body.get("tools")))
        chunks = chat_chunks(step, body.get("model", "scripted"), self._id("chatcmpl_"), self._id("call_"))
        if body.get("stream"):
            return self._stream(iter([*(sse(None, c) for c in chunks), b"data: [DONE]\n\n"]))
        self._json(chat_completion(step, body.get("model", "scripted"), self._id("chatcmpl_"), self._id("call_")))

    # Gemini generateContent / streamGenerateContent (Gemini CLI).

    def _gemini(self, path: str, body: dict) -> None:
        main = bool(body.get("tools")) and not (body.get("generationConfig") or {}).get("responseJsonSchema")
        step = self._next(path, body, main=main)
        answer = gemini_answer(step, body)
        if ":streamGenerateContent" in path:
            return self._stream(iter([sse(None, answer)]))
        self._json(answer)


def _usage() -> dict:
    return {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def anthropic_message(step: Step, model: str, msg_id: str, tool_id: str) -> dict:
    if step.tool:
        content = [{"type": "tool_use", "id": tool_id, "name": step.tool, "input": step.input}]
    else:
        content = [{"type": "text", "text": step.text}]
    stop = "tool_use" if step.tool else "end_turn"
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(),
    }


def anthropic_events(step: Step, model: str, msg_id: str, tool_id: str) -> Iterator[bytes]:
    """The Messages API's stream: message_start, one content block (a text, or a tool_use whose input
    comes as input_json_delta pieces), message_delta with the stop reason, message_stop."""
    start = anthropic_message(step, model, msg_id, tool_id)
    start.update(content=[], stop_reason=None)
    yield sse("message_start", {"type": "message_start", "message": start})
    if step.tool:
        block = {"type": "tool_use", "id": tool_id, "name": step.tool, "input": {}}
        whole = json.dumps(step.input)
        half = len(whole) // 2
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in (whole[:half], whole[half:])]
    else:
        block = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": step.text}]
    yield sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
    for delta in deltas:
        yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    stop = "tool_use" if step.tool else "end_turn"
    delta = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": _usage()}
    yield sse("message_delta", delta)
    yield sse("message_stop", {"type": "message_stop"})


def responses_events(step: Step, kind: str, resp_id: str, call_id: str) -> Iterator[bytes]:
    """The Responses API's stream as Codex reads it: response.created, one output item (a message with
    its text deltas, a function_call with JSON arguments, or a custom_tool_call with free-form input
    when the tool was offered as `custom`), response.completed with usage."""
    yield sse("response.created", {"type": "response.created", "response": {"id": resp_id}})
    if step.tool and kind == "custom":
        raw = step.input if isinstance(step.input, str) else json.dumps(step.input)
        item: dict = {"type": "custom_tool_call", "id": f"ctc_{call_id}", "call_id": call_id, "name": step.tool}
        item["input"] = raw
        added = {**item, "input": "", "status": "in_progress"}
        item["status"] = "completed"
    elif step.tool:
        args = step.input if isinstance(step.input, str) else json.dumps(step.input)
        item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": step.tool}
        item["arguments"] = args
        added = {**item, "arguments": "", "status": "in_progress"}
        item["status"] = "completed"
    else:
        item = {"type": "message", "id": f"msg_{call_id}", "role": "assistant", "status": "completed"}
        item["content"] = [{"type": "output_text", "text": step.text, "annotations": []}]
        added = {**item, "content": [], "status": "in_progress"}
    yield sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": added})
    if not step.tool:
        delta = {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0}
        yield sse("response.output_text.delta", {**delta, "delta": step.text})
    yield sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    done = {"id": resp_id, "status": "completed", "output": [item], "usage": usage}
    yield sse("response.completed", {"type": "response.completed", "response": done})


def gemini_answer(step: Step, body: dict) -> dict:
    """One GenerateContentResponse: a functionCall part or a text part. A side request asking for JSON
    (Gemini CLI's next-speaker check, its model routers) gets a JSON text meaning "stop, the user is
    next" and "a simple task"."""
    config = body.get("generationConfig") or {}
    if step.tool:
        part: dict = {"functionCall": {"name": step.tool, "args": step.input}}
    elif config.get("responseMimeType") == "application/json":
        verdict = {"reasoning": "scripted", "next_speaker": "user", "model_choice": "flash"}
        verdict.update(complexity_reasoning="scripted", complexity_score=1)
        part = {"text": json.dumps(verdict)}
    else:
        part = {"text": step.text}
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}


def _chat_call(step: Step, call_id: str) -> dict:
    args = step.input if isinstance(step.input, str) else json.dumps(step.input)
    return {"id": call_id, "type": "function", "function": {"name": step.tool, "arguments": args}}


def chat_completion(step: Step, model: str, chat_id: str, call_id: str) -> dict:
    message: dict = {"role": "assistant", "content": None if step.tool else step.text}
    if step.tool:
        message["tool_calls"] = [_chat_call(step, call_id)]
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if step.tool else "stop"}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return {
        "id": chat_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": usage,
    }


def chat_chunks(step: Step, model: str, chat_id: str, call_id: str) -> list[dict]:
    """The Chat Completions stream: the role, then the text or one tool call (its arguments in two
    pieces), then the finish reason with usage; the caller ends it with `data: [DONE]`."""
    head = {"id": chat_id, "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict, finish: str | None = None, **more: object) -> dict:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **more}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if step.tool:
        call = _chat_call(step, call_id)
        args = call["function"]["arguments"]
        half = len(args) // 2
        first = {"index": 0, **call, "function": {"name": step.tool, "arguments": args[:half]}}
        chunks.append(chunk({"tool_calls": [first]}))
        chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]}))
    else:
        chunks.append(chunk({"content": step.text}))
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    chunks.append(chunk({}, "tool_calls" if step.tool else "stop", usage=usage))
    return chunks
