"""Stet as a proxy component under ACP's conductor (`stet acp --proxy`).

The conductor (agent-client-protocol-conductor, from the ACP Rust SDK) owns every process of a chain
and talks to each component on its stdio. A proxy component has one connection, the conductor's, and
two peers on it:

- its predecessor (the editor, or the proxy before): messages both ways are plain ACP;
- its successor (the agent, or the proxy after): everything is wrapped in an envelope. The proxy sends
  `{"method": "_proxy/successor", "params": {"method": M, "params": P}}` (with an `id` for a request,
  none for a notification) and the conductor answers such a request with a plain response carrying the
  inner result; the conductor delivers the successor's messages the same way, and the proxy answers an
  enveloped request with a plain response to the conductor's id.
- It is initialised with `_proxy/initialize` (initialize's params) instead of `initialize`, sends
  `initialize` on to its successor in the envelope and answers with the successor's answer.

Also understood: the spelling of ACP's proposal (`proxy/initialize`, `proxy/successor`) and the form
before December 2025 (plain `initialize` carrying `_meta.proxy` or
`clientCapabilities._meta.symposium.proxy`, to be returned in the answer; the envelope split into
`_proxy/successor/request` and `_proxy/successor/notification`). Stet answers in the form it was
initialised with.

`Envelope` turns the one stream into the two the relay knows (editor side, agent side) and back, so
the relay and Stet's part see exactly what they see between a real editor and agent:
`from_conductor` says which side a line read from the conductor belongs to, with the envelope taken
off; `to_editor` and `to_agent` give the line to write to the conductor for what the relay sends each
side. Ids: a request Stet sends to its successor gets an id of its own (`stet-N`, a string, never one
the conductor uses) so that its plain answer is told apart from the predecessor's answers; the
successor's requests keep the conductor's id, so the answer the relay sends back to the "agent" is the
plain answer to the conductor's envelope.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TextIO

from .message import JSON
from .part import Part
from .relay import Pump, Relay, ended
from .wire import LINE_BOUND, WHOLE, Lines, Log, Output, open_input, open_output, split_end

CURRENT = ("_proxy/initialize", "_proxy/successor", "_proxy/successor")
PROPOSAL = ("proxy/initialize", "proxy/successor", "proxy/successor")
EARLIER = ("initialize", "_proxy/successor/request", "_proxy/successor/notification")
ENVELOPES = {m for form in (CURRENT, PROPOSAL, EARLIER) for m in form[1:]}

EDITOR = "editor"
AGENT = "agent"


def _dump(body: JSON) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _parse(line: bytes) -> JSON | None:
    try:
        body = json.loads(line)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def earlier_flag(params: Any) -> str | None:
    """Where a plain `initialize` of the earlier form says "you are a proxy": `meta`
    (`_meta.proxy`, @thinkwell/conductor) or `symposium` (`clientCapabilities._meta.symposium.proxy`,
    sacp-conductor); None when it does not."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if isinstance(meta, dict) and meta.get("proxy") is True:
        return "meta"
    caps = params.get("clientCapabilities")
    meta = caps.get("_meta") if isinstance(caps, dict) else None
    sym = meta.get("symposium") if isinstance(meta, dict) else None
    if isinstance(sym, dict) and sym.get("proxy") is not None:
        return "symposium"
    return None


@dataclass
class Envelope:
    form: tuple[str, str, str] | None = None  # (initialize method, request envelope, notification envelope)
    flag: str | None = None  # the earlier form's proxy flag, returned in the initialize answer
    init_id: Any = None  # the id of the conductor's initialize, whose answer may need the flag
    ours: dict[str, Any] = field(default_factory=dict)  # our envelope ids -> the relay's request ids
    counter: int = 0
    unwrappable: int = 0  # lines for the successor that were not JSON: cannot be enveloped

    def from_conductor(self, line: bytes) -> tuple[str, bytes]:
        """(side, line for the relay) for a line the conductor sent."""
        body = _parse(line)
        if body is None:
            return EDITOR, line
        method = body.get("method")
        if method is None:
            rid = body.get("id")
            if isinstance(rid, str) and rid in self.ours:  # the successor's answer to our envelope
                inner: JSON = {"jsonrpc": "2.0", "id": self.ours.pop(rid)}
                for key in ("result", "error"):
                    if key in body:
                        inner[key] = body[key]
                return AGENT, _dump(inner)
            return EDITOR, line
        if self.form is None and "id" in body:
            if method in (CURRENT[0], PROPOSAL[0]):
                self.form = CURRENT if method == CURRENT[0] else PROPOSAL
                self.init_id = body["id"]
                return EDITOR, _dump({**body, "method": "initialize"})
            if method == "initialize" and (flag := earlier_flag(body.get("params"))):
                self.form, self.flag, self.init_id = EARLIER, flag, body["id"]
                return EDITOR, line
        if method in ENVELOPES and (self.form is None or method in self.form[1:]):
            params = body.get("params")
            params = params if isinstance(params, dict) else {}
            unwrapped: JSON = {"jsonrpc": "2.0"}
            if "id" in body:
                unwrapped["id"] = body["id"]
            unwrapped["method"] = params.get("method")
            if "params" in params:
                unwrapped["params"] = params["params"]
            return AGENT, _dump(unwrapped)
        return EDITOR, line

    def to_editor(self, line: bytes) -> bytes:
        """What to write to the conductor for a line the relay sends the editor."""
        if self.flag is None or self.init_id is None:
            return line
        body = _parse(line)
        if (
            body is None
            or "method" in body
            or body.get("id") != self.init_id
            or not isinstance(body.get("result"), dict)
        ):
            return line
        self.init_id = None
        result = dict(body["result"])
        if self.flag == "meta":
            result["_meta"] = {**(result.get("_meta") or {}), "proxy": True}
        else:
            caps = dict(result.get("agentCapabilities") or {})
            meta = dict(caps.get("_meta") or {})
            meta["symposium"] = {**(meta.get("symposium") or {}), "proxy": True}
            caps["_meta"] = meta
            result["agentCapabilities"] = caps
        return _dump({**body, "result": result})

    def to_agent(self, line: bytes) -> bytes | None:
        """What to write to the conductor for a line the relay sends the agent (None: nothing can be
        sent: a line that is not a JSON object cannot be put in the envelope)."""
        body = _parse(line)
        if body is None:
            self.unwrappable += 1
            return None
        method = body.get("method")
        if not isinstance(method, str):  # an answer to the successor's request: plain, to the conductor's id
            return line
        form = self.form or CURRENT
        inner: JSON = {"method": method}
        if "params" in body:
            inner["params"] = body["params"]
            cancelled = body["params"].get("requestId") if isinstance(body["params"], dict) else None
            if method == "$/cancel_request" and cancelled is not None:  # our id for that request, not the editor's
                ours = next((k for k, v in self.ours.items() if v == cancelled), None)
                if ours is not None:
                    inner["params"] = {**body["params"], "requestId": ours}
        if "id" not in body:
            return _dump({"jsonrpc": "2.0", "method": form[2], "params": inner})
        self.counter += 1
        ours = f"stet-{self.counter}"
        self.ours[ours] = body["id"]
        return _dump({"jsonrpc": "2.0", "id": ours, "method": form[1], "params": inner})


class _Side(Output):
    """What the relay writes to one side, turned into what goes to the conductor: written to the
    conductor's output under its lock (shared, so that a line, or the pieces of an over-long one,
    never interleave with the other side's)."""

    def __init__(self, conductor: Output, turn: Any, log: Log) -> None:
        super().__init__(None)
        self.conductor, self.turn, self.log = conductor, turn, log
        self.lock = conductor.lock

    async def write(self, data: bytes) -> None:
        raw, end = split_end(data)
        if not end:  # a piece of a line over the bound: it cannot be read, so neither enveloped
            self.log.once("piece", f"a line longer than {LINE_BOUND} bytes cannot cross the conductor: not passed on")
            return
        out = self.turn(raw)
        if out is None:
            self.log.once("unwrappable", "a line that is not a JSON object cannot go in the envelope: not passed on")
            return
        await self.conductor.write(out + end)
        if self.conductor.broken:
            self.broken = True


async def _split(
    lines: Lines, env: Envelope, editor: asyncio.StreamReader, agent: asyncio.StreamReader, log: Log
) -> None:
    """The conductor's lines to the two sides, the envelope taken off."""
    try:
        while (got := await lines.next()) is not None:
            data, kind = got
            if kind != WHOLE:  # over the bound: unread, so neither its side nor its envelope is known
                log.once(
                    "long-in", f"a line longer than {LINE_BOUND} bytes from the conductor cannot be routed: dropped"
                )
                continue
            raw, end = split_end(data)
            side, line = env.from_conductor(raw)
            (agent if side == AGENT else editor).feed_data(line + (end or b"\n"))
    finally:
        editor.feed_eof()
        agent.feed_eof()


async def run(part: Part, *, stdin: BinaryIO, stdout: BinaryIO, stderr: TextIO | None = None) -> int:
    """Stet as a proxy component: the conductor on `stdin` / `stdout`, the relay's two pumps and
    Stet's part between the predecessor and the successor, until the conductor closes the stream."""
    log = Log(stderr)
    env = Envelope()
    conductor_out = await open_output(stdout)
    loop = asyncio.get_running_loop()
    editor_in, agent_in = asyncio.StreamReader(), asyncio.StreamReader()
    to_editor, to_agent = _Side(conductor_out, env.to_editor, log), _Side(conductor_out, env.to_agent, log)
    relay = Relay(part, log)
    up = Pump(
        "editor",
        Lines(editor_in),
        to_agent,
        to_editor,
        part.from_editor,
        relay.editor_requests,
        relay.agent_requests,
        log,
    )
    down = Pump(
        "agent", Lines(agent_in), to_editor, to_agent, part.from_agent, relay.agent_requests, relay.editor_requests, log
    )
    split = asyncio.create_task(_split(Lines(await open_input(stdin)), env, editor_in, agent_in, log))
    pumps = [asyncio.create_task(up.run()), asyncio.create_task(down.run())]
    stopping = asyncio.Event()
    signalled: list[int] = []

    def on_signal(sig: int) -> None:
        signalled.append(sig)
        stopping.set()

    handled = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, on_signal, sig)
            handled.append(sig)
    stop = asyncio.create_task(stopping.wait())
    try:
        # Until the conductor closes our stdin (both pumps pass on what came first), stops reading
        # our stdout, or a signal comes.
        waiting: set[asyncio.Task[Any]] = {*pumps, stop}
        while waiting and not stop.done():
            done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if any(ended(t, log) in ("broken", "failed") for t in done if t is not stop):
                break
            if all(t.done() for t in pumps):
                break
        return 128 + signalled[0] if signalled else 0  # as a shell reports a process a signal ended
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        for t in (*pumps, split, stop):
            t.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        try:
            await part.close()
        except Exception as exc:
            log.once("close", f"Stet's part failed to close ({type(exc).__name__})")
        await conductor_out.aclose()
