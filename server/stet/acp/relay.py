"""The transparent relay: the agent's process and the two pumps between it and the editor.

Each direction is one pump: read a line, ask the part, pass it on (the bytes as read, unless the
part rewrites it), in order; the two directions never wait for each other. Requests are paired
with their responses by id, per direction (the two sides' ids are independent, numbers or
strings), so the part knows what a response answers. Faults: when the agent ends, every request
of the editor still waiting is answered with an error, and stet ends with the agent's code; when
the editor goes, the agent's stdin is closed, it gets a grace period, then SIGTERM, then SIGKILL;
SIGTERM, SIGINT or SIGHUP to stet is passed to the agent, then the same. The agent runs in a process
group of its own, and signals go to the group: what it started (the agent behind a launcher) ends too;
when stet dies without stopping it (SIGKILL), a reaper stops the group (_watch). Stdout carries only
the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import BinaryIO, TextIO

from .message import FORWARD, JSON, Forward, Message, Reply, Rewrite, Verdict
from .part import Part
from .wire import LAST, LINE_BOUND, WHOLE, Lines, Log, Output, encode, open_input, open_output, parse, shown, split_end

GROUPS = os.name == "posix"  # the agent in a process group of its own, signalled as one
GRACE = 5.0  # seconds the agent has to end by itself once the editor is gone, and again after SIGTERM
SH = "/bin/sh"
REAPER = "stet-acp-reaper"  # the reaper's name in `ps` ($0 of its sh)
# The reaper's script ($1 the agent's process group, $2 its grace in tenths of a second): stet's
# `done` on stdin, it exits; the end of stdin without it (stet died), it stops the group: SIGTERM,
# the grace (over as soon as the group is gone), SIGKILL.
REAP = (
    'read -r said; [ "$said" = done ] && exit 0; '
    'kill -s TERM -- "-$1" 2>/dev/null || exit 0; '
    'n=$2; while [ "$n" -gt 0 ]; do kill -s 0 -- "-$1" 2>/dev/null || exit 0; '
    "sleep 0.1 2>/dev/null || sleep 1; n=$((n - 1)); done; "
    'kill -s KILL -- "-$1" 2>/dev/null; exit 0'
)
INTERNAL_ERROR = -32603


class PassThrough:
    """A part that takes no part: every message passes on as it was read."""

    async def from_editor(self, msg: Message, asked: Message | None) -> Verdict:
        return FORWARD

    async def from_agent(self, msg: Message, asked: Message | None) -> Verdict:
        return FORWARD

    async def close(self) -> None:
        return None


def _key(rid: object) -> tuple[bool, object] | None:
    """A request id as a key: 1 and "1" are different ids; ids that cannot be keys are not paired."""
    if isinstance(rid, bool) or not isinstance(rid, (int, float, str)):
        return None
    return isinstance(rid, str), rid


def exit_code(returncode: int) -> int:
    """The agent's exit status as a shell reports it (killed by signal N: 128 + N)."""
    return returncode if returncode >= 0 else 128 - returncode


class Pump:
    """One direction: from `lines` to `out`, through `judge`; replies go to `back`."""

    def __init__(
        self,
        name: str,
        lines: Lines,
        out: Output,
        back: Output,
        judge: Callable[[Message, Message | None], Awaitable[Verdict]],
        sent: dict[tuple[bool, object], Message],
        answered: dict[tuple[bool, object], Message],
        log: Log,
    ) -> None:
        self.name, self.lines, self.out, self.back, self.judge = name, lines, out, back, judge
        self.sent = sent  # this direction's requests passed on, by id: what the other side answers
        self.answered = answered  # the other direction's requests, which responses of this one answer
        self.log = log

    async def run(self) -> str:
        """Pass every line on; "eof" when the input ends, "broken" when the output's reader is gone."""
        while True:
            got = await self.lines.next()
            if got is None:
                return "eof"
            data, kind = got
            if kind == WHOLE:
                ok = await self._message(data)
            else:
                ok = await self._long(data, kind)
            if not ok:
                return "broken"

    async def _long(self, data: bytes, kind: int) -> bool:
        """An over-long line: its pieces passed on as they come, under the output's lock."""
        self.log.once("long", f"a line longer than {LINE_BOUND} bytes from the {self.name} passed through unread")
        out = self.out
        async with out.lock:
            try:
                while True:
                    if data and not out.broken:
                        await out.write(data)
                    if kind == LAST:
                        return not out.broken
                    got = await self.lines.next()
                    if got is None:
                        return not out.broken
                    data, kind = got
            except (OSError, ConnectionError):
                out.broken = True
                return False

    async def _message(self, data: bytes) -> bool:
        raw, _ = split_end(data)
        msg = parse(raw)
        if msg.body is None:
            if raw.strip():
                self.log.once(
                    "not-json", f"a line from the {self.name} that is not a JSON object passed through: {shown(raw)}"
                )
            return await self.out.send(data)
        asked = None
        if msg.is_response:
            key = _key(msg.body.get("id"))
            asked = self.answered.pop(key, None) if key is not None else None
        try:
            verdict = await self.judge(msg, asked)
        except Exception as exc:  # the part's failure never stops a message
            name = type(exc).__name__
            self.log.once(
                f"part-{name}",
                f"Stet's part failed on a message from the {self.name} ({name}: {shown(str(exc).encode())}); passed through",
            )
            verdict = FORWARD
        if isinstance(verdict, Reply):
            return await self.back.send(encode(verdict.body)) or True  # the sender gone: its own pump says so
        if isinstance(verdict, Rewrite):
            out = encode(verdict.body)
        else:
            if not isinstance(verdict, Forward):
                self.log.once("verdict", f"Stet's part answered {type(verdict).__name__}: passed through")
            out = data
        if msg.is_request:
            key = _key(msg.body.get("id"))
            if key is not None:
                self.sent[key] = msg
        return await self.out.send(out)


class Relay:
    def __init__(self, part: Part, log: Log) -> None:
        self.part, self.log = part, log
        self.editor_requests: dict[tuple[bool, object], Message] = {}  # in flight to the agent
        self.agent_requests: dict[tuple[bool, object], Message] = {}  # in flight to the editor
        self.stopping = asyncio.Event()
        self.signalled: int | None = None

    def on_signal(self, sig: int, proc: asyncio.subprocess.Process) -> None:
        self.signalled = sig
        signal_agent(proc, sig)
        self.stopping.set()

    async def answer_in_flight(self, editor: Output, code: int) -> None:
        """Every request of the editor the agent did not answer gets an error saying it exited."""
        waiting, self.editor_requests = self.editor_requests, {}
        for msg in waiting.values():
            assert msg.body is not None
            error: JSON = {"code": INTERNAL_ERROR, "message": f"the agent exited (code {code})"}
            if not await editor.send(encode({"jsonrpc": "2.0", "id": msg.body["id"], "error": error})):
                return


def signal_agent(proc: asyncio.subprocess.Process, sig: int) -> None:
    """`sig` to the agent and to what it started: its process group (it has one of its own, see
    _start). An agent behind a launcher (npx, Codex's ACP adapter's node script) is the launcher's
    child holding the pipes; the launcher ends at SIGTERM without it."""
    if GROUPS:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
            return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)


async def _stop(proc: asyncio.subprocess.Process, grace: float) -> None:
    """The agent ended: by itself within `grace`, else SIGTERM, then SIGKILL (to its process group:
    the process ends when it and whatever holds its pipes have)."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            signal_agent(proc, sig)
        try:
            await asyncio.wait_for(proc.wait(), grace)
            return
        except TimeoutError:
            continue
    await proc.wait()


def ended(task: asyncio.Task[str], log: Log) -> str | None:
    """How a pump ended ("eof", "broken", "failed"), or None while it runs."""
    if not task.done() or task.cancelled():
        return None
    exc = task.exception()
    if exc is None:
        return task.result()
    log.once(f"pump-{type(exc).__name__}", f"the relay failed ({type(exc).__name__}: {shown(str(exc).encode())})")
    return "failed"


async def _cancelled(task: asyncio.Task[str]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def run(
    argv: Sequence[str],
    part: Part,
    *,
    stdin: BinaryIO,
    stdout: BinaryIO,
    cwd: str,
    env: Mapping[str, str],
    stderr: TextIO | None = None,
    grace: float = GRACE,
) -> int:
    """Relay between the editor (`stdin` / `stdout`) and the agent `argv`, started in `cwd` with
    `env` (its stderr is ours), until one of them ends; the exit code mirrors the agent's."""
    log = Log(stderr)
    editor_in = await open_input(stdin)
    editor_out = await open_output(stdout)
    proc = await _start(argv, cwd, env, log, editor_in, editor_out, part)
    if proc is None:
        return 127
    assert proc.stdin is not None and proc.stdout is not None
    reaper = None
    relay = Relay(part, log)
    agent_in = Output(proc.stdin)
    up, down = _pumps(relay, part, editor_in, editor_out, proc.stdout, agent_in, log)
    loop = asyncio.get_running_loop()
    handled = _handle_signals(loop, relay, proc)
    t_up = asyncio.create_task(up.run())
    t_down = asyncio.create_task(down.run())
    t_stop = asyncio.create_task(relay.stopping.wait())
    try:
        reaper = await _watch(proc, grace, log)
        await asyncio.wait({t_up, t_down, t_stop}, return_when=asyncio.FIRST_COMPLETED)
        agent_ending = ended(t_down, log) == "eof" or ended(t_up, log) == "broken"
        if not agent_ending:  # the editor went, a signal came, or a pump failed
            agent_in.close()  # the agent's stdin ends: a well-behaved agent ends too
        await _stop(proc, grace)
        # What the agent said before it ended reaches the editor; a descendant holding its stdout does not hold us.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(t_down), 1.0)
        await _cancelled(t_down)
        await _cancelled(t_up)
        assert proc.returncode is not None
        code = exit_code(proc.returncode)
        await relay.answer_in_flight(editor_out, code)  # (nothing is written when the editor is gone)
        return code
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        t_stop.cancel()
        for t in (t_up, t_down):
            if not t.done():
                await _cancelled(t)
        if proc.returncode is None:
            signal_agent(proc, signal.SIGKILL)
            await proc.wait()
        if reaper is not None:
            await _dismiss(reaper, proc.returncode is not None)
        try:
            await part.close()
        except Exception as exc:
            log.once("close", f"Stet's part failed to close ({type(exc).__name__})")
        await editor_out.aclose()


def _pumps(
    relay: Relay,
    part: Part,
    editor_in: asyncio.StreamReader,
    editor_out: Output,
    agent_out: asyncio.StreamReader,
    agent_in: Output,
    log: Log,
) -> tuple[Pump, Pump]:
    """The two directions: the editor's messages to the agent, the agent's to the editor (each
    answering its own sender directly when the part replies)."""
    up = Pump(
        "editor",
        Lines(editor_in),
        agent_in,
        editor_out,
        part.from_editor,
        relay.editor_requests,
        relay.agent_requests,
        log,
    )
    down = Pump(
        "agent",
        Lines(agent_out),
        editor_out,
        agent_in,
        part.from_agent,
        relay.agent_requests,
        relay.editor_requests,
        log,
    )
    return up, down


async def _start(
    argv: Sequence[str],
    cwd: str,
    env: Mapping[str, str],
    log: Log,
    editor_in: asyncio.StreamReader,
    editor_out: Output,
    part: Part,
) -> asyncio.subprocess.Process | None:
    """The agent's process; None when it cannot start (said, the editor answered, the part closed)."""
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            cwd=cwd,
            env=dict(env),
            process_group=0 if GROUPS else None,  # a group of its own: stopped with what it starts
        )
    except OSError as exc:
        why = "not found" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
        text = f"cannot start the agent {shown(argv[0].encode())}: {why}"
        log.say(text)
        await _refuse(Lines(editor_in), editor_out, text)
        await editor_out.aclose()
        with contextlib.suppress(Exception):
            await part.close()
        return None


async def _watch(proc: asyncio.subprocess.Process, grace: float, log: Log) -> asyncio.subprocess.Process | None:
    """The reaper of the agent's process group: when stet dies however it dies (SIGKILL: how Zed
    stops an agent server; an editor killing stet's process group, which the agent's is not), the
    group is stopped, as _stop would have (agents such as Claude Code's and Codex's ACP adapters do
    not end at their stdin's end). A sh in a session of its own (out of reach of what kills stet's
    group), reading a pipe only stet writes to: the kernel closes it whenever stet dies. Not
    PR_SET_PDEATHSIG (preexec_fn): it reaches only the direct child, a launcher such as npx that
    leaves its child at a signal, and it fires when the thread that started it ends; nor a
    subreaper, which needs stet alive. None without sh or process groups, or when it cannot start:
    stet then stops the agent only when it can (as it always has)."""
    if not GROUPS or not os.path.exists(SH):
        return None
    try:
        return await asyncio.create_subprocess_exec(
            SH,
            "-c",
            REAP,
            REAPER,
            str(proc.pid),  # the agent's process group (it leads it, see _start)
            str(max(1, round(grace * 10))),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,  # holds nothing of the editor's
            stderr=asyncio.subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
    except OSError as exc:
        log.once("reaper", f"the agent will not be stopped if stet is killed: {shown(str(exc).encode())}")
        return None


async def _dismiss(reaper: asyncio.subprocess.Process, agent_ended: bool) -> None:
    """The reaper's end: `done` once the agent ended, and it exits at once, killing nothing (the
    group's id may be another's by then), awaited; else (stet stopping with the agent running) its
    stdin's end, and it stops the agent's group itself."""
    assert reaper.stdin is not None
    with contextlib.suppress(OSError, ConnectionError):
        if agent_ended:
            reaper.stdin.write(b"done\n")
        reaper.stdin.close()
    if not agent_ended:
        return
    try:
        await asyncio.wait_for(asyncio.shield(reaper.wait()), 5.0)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            reaper.kill()  # (its pid, not yet waited for, is still its own)
        await reaper.wait()


def _handle_signals(
    loop: asyncio.AbstractEventLoop, relay: Relay, proc: asyncio.subprocess.Process
) -> list[signal.Signals]:
    """SIGTERM, SIGINT and SIGHUP passed to the agent (then the relay ends); the ones handled."""
    handled = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        try:
            loop.add_signal_handler(sig, relay.on_signal, sig, proc)
            handled.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return handled


async def _refuse(lines: Lines, out: Output, text: str, within: float = 5.0) -> None:
    """No agent: the editor's first request (within `within` seconds) gets an error saying why,
    rather than an end of the stream it cannot explain."""
    try:
        async with asyncio.timeout(within):
            while (got := await lines.next()) is not None:
                data, kind = got
                if kind != WHOLE:
                    continue
                msg = parse(split_end(data)[0])
                if msg.is_request:
                    assert msg.body is not None
                    error: JSON = {"code": INTERNAL_ERROR, "message": f"stet acp: {text}"}
                    await out.send(encode({"jsonrpc": "2.0", "id": msg.body["id"], "error": error}))
                    return
    except TimeoutError:
        return
