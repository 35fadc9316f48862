"""`stet mcp` over stdio: answer `initialize` at once, then serve with the MCP SDK.

Claude Code waits for every MCP server to answer `initialize` before the session's first
request, and loading the SDK (pydantic, its types) takes one to three seconds on a busy
machine. So this module, which imports nothing heavy, stands between the client and the SDK:
the client's stdin and stdout become the wire, and fd 0 / fd 1 become two pipes the SDK
serves as usual (server.run("stdio"), its public way). One thread copies the wire's lines in,
answering the first at once when it is `initialize` (handshake.py); one copies the SDK's
lines out, dropping its own answer to that request (the SDK must still see the request: its
session starts there). Both are daemon threads: a blocked read never holds the process.

Ctrl-C (or SIGTERM) ends the input, as a client that goes away does: the SDK finishes what it
is doing, the review store is closed, and the process exits 130. A second one exits at once."""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading

from .. import limits
from ..faults import fault
from .handshake import early_answer

TYPE_CHECKING = False  # no `typing` before the answer: it costs a tenth of `python -c pass`
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

TOO_LONG = b"{the message is longer than stet mcp reads}\n"  # the SDK answers it as a parse error
OUT_DRAIN = 10.0  # seconds the SDK's last answers are given to reach the wire at exit


class _Front:
    def __init__(self) -> None:
        self.wire_in, self.wire_out = os.dup(0), os.dup(1)
        sdk_in, self.feed = os.pipe()  # what the SDK reads
        self.drain, sdk_out = os.pipe()  # what the SDK writes
        os.dup2(sdk_in, 0)
        os.dup2(sdk_out, 1)
        os.close(sdk_in)
        os.close(sdk_out)
        self.wake_r, self.wake_w = os.pipe()
        self.finish_r, self.finish_w = os.pipe()
        self.write_lock = threading.Lock()
        self.answered_id: object = None
        self.answered: bytes = b""
        self.serving = False
        self.stopping = False
        self.out = threading.Thread(target=self.copy_out, name="stet-mcp-out", daemon=True)

    def on_signal(self, _signum: int, _frame: FrameType | None) -> None:
        if not self.serving:  # nothing is open yet (the SDK loads): nothing to close
            os._exit(130)
        if self.stopping:
            raise KeyboardInterrupt
        self.stopping = True
        os.write(self.wake_w, b"x")

    def copy_in(self) -> None:
        """The wire's lines to the SDK, whole, each bounded; the first answered if it is initialize."""
        pending, first, skipping = bytearray(), True, False
        try:
            while True:
                ready, _, _ = select.select([self.wire_in, self.wake_r], [], [])
                if self.wake_r in ready:
                    return
                chunk = os.read(self.wire_in, 1 << 16)
                if not chunk:
                    return
                seen = len(pending)  # the newline is looked for in what is new only
                pending += chunk
                while (end := pending.find(b"\n", seen)) >= 0:
                    too_long = skipping or end > limits.MCP_MESSAGE
                    line = TOO_LONG if too_long else bytes(pending[: end + 1])
                    del pending[: end + 1]
                    seen, skipping = 0, False
                    if first:
                        first = False
                        self._answer_early(line)
                    _write_all(self.feed, line)
                if len(pending) > limits.MCP_MESSAGE:
                    pending.clear()
                    skipping = True
        except OSError:  # the SDK is gone (a broken pipe) or the wire was closed
            return
        finally:
            os.close(self.feed)

    def _answer_early(self, line: bytes) -> None:
        answered = early_answer(line)
        if answered is None:
            return
        self.answered, self.answered_id = answered
        with self.write_lock:
            _write_all(self.wire_out, self.answered)

    def copy_out(self) -> None:
        """The SDK's lines to the wire, but for its answer to the initialize answered already.
        Told to finish, it copies what the pipe holds still and stops: the SDK keeps a copy of
        the pipe's write end open for good, so its end is never seen."""
        pending = bytearray()
        while True:
            ready, _, _ = select.select([self.drain, self.finish_r], [], [])
            if self.drain not in ready:
                os.set_blocking(self.drain, False)
                while chunk := _read_now(self.drain):
                    pending += chunk
                self._emit(pending)
                return
            chunk = os.read(self.drain, 1 << 16)
            if not chunk:
                return
            pending += chunk
            self._emit(pending)

    def _emit(self, pending: bytearray) -> None:
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[: end + 1])
            del pending[: end + 1]
            if self.answered_id is not None and self._is_the_answered(line):
                self.answered_id = None
                continue
            with self.write_lock:
                try:
                    _write_all(self.wire_out, line)
                except OSError:  # the client is gone; keep draining so the SDK never blocks
                    continue

    def _is_the_answered(self, line: bytes) -> bool:
        try:
            message: Any = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message or message.get("id") != self.answered_id:
            return False
        if message != json.loads(self.answered):
            said = line[:2000].decode("utf-8", "replace").strip()
            print(f"stet mcp: the MCP SDK answers initialize differently: {said!a}", file=sys.stderr)
        return True


_FRONT: list[_Front] = []  # the one front of this process, once started


def start_front() -> None:
    """Take the wire and answer `initialize` from now on: the thin client calls it first thing,
    so the answer does not wait for the command line to be parsed and the store found."""
    if _FRONT:
        return
    front = _Front()
    _FRONT.append(front)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, front.on_signal)
    threading.Thread(target=front.copy_in, name="stet-mcp-in", daemon=True).start()
    front.out.start()


def serve_stdio(db_path: str, roots: list[str], agent: str | None) -> bool:
    """Serve until the client closes stdin; True when a signal ended it."""
    start_front()
    front = _FRONT[0]
    try:
        fault("mcp:before-sdk")  # a test's pause: the SDK as slow as on a busy machine
        from .server import serve  # the SDK: seconds, while the client has its answer already

        front.serving = True
        serve(db_path, roots, agent=agent)
        os.write(front.finish_w, b"x")  # all the SDK wrote is in the pipe: copy it, then stop
        front.out.join(OUT_DRAIN)
    finally:
        front.serving = False
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    return front.stopping


def _read_now(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
