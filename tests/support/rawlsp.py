"""A bare JSON-RPC client for `stet serve` over stdio, written without pygls or Stet's code.

The fuzzing and hostile-input tests need to send what no well-behaved client library would:
broken framing, invalid JSON, wrong types anywhere. This client frames bytes by hand, reads
the server's answers on a thread, answers the server's own requests (applyEdit: refused,
so nothing outside the test's control changes; code lens refresh: null), and keeps the
server's stderr in a file for the failure message.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVER = [sys.executable, "-m", "stet", "serve"]


class Dead(Exception):
    pass


class RawServer:
    def __init__(self, root: Path, env: dict | None = None, apply_edits: bool = False):
        self.root = root
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=str(root),
            env={**os.environ, **(env or {})},
        )
        self.apply_edits = apply_edits
        self.answers: dict = {}
        self.notes: queue.Queue = queue.Queue()
        self.cond = threading.Condition()
        self.ids = itertools.count(1)
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # --- the wire ----------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise Dead(f"cannot write to the server: {exc}; {self.tail()}") from None

    def send(self, msg) -> None:
        body = json.dumps(msg).encode() if not isinstance(msg, (bytes, bytearray)) else bytes(msg)
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self.cond:
                        self.closed = True
                        self.cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            body = out.read(length or 0)
            try:
                msg = json.loads(body)
            except ValueError:
                continue
            if "method" in msg and "id" in msg:  # the server asks something
                self._answer_server(msg)
            elif "method" in msg:
                self.notes.put(msg)
            else:
                with self.cond:
                    self.answers[json.dumps(msg.get("id"))] = msg
                    self.cond.notify_all()

    def _answer_server(self, msg: dict) -> None:
        if msg["method"] == "workspace/applyEdit":
            result = {"applied": False, "failureReason": "raw test client"}
        else:
            result = None
        try:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        except Dead:
            pass

    def wait_answer(self, msg_id, timeout: float = 60) -> dict:
        key = json.dumps(msg_id)
        deadline = time.monotonic() + timeout
        with self.cond:
            while key not in self.answers:
                if self.closed:
                    raise Dead(f"the server closed its output (exit {self.proc.poll()}); {self.tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to {msg_id!r} in {timeout} s; {self.tail()}")
                self.cond.wait(left)
            return self.answers.pop(key)

    def request(self, method, params=None, *, timeout: float = 60, msg_id=None, omit_params=False) -> dict:
        """Send a request; returns the whole response (with `result` or `error`)."""
        msg_id = msg_id if msg_id is not None else f"r{next(self.ids)}"
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            msg["params"] = params
        self.send(msg)
        return self.wait_answer(msg_id, timeout)

    def notify(self, method, params=None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method, params=None, **kw):
        """The result of a request that must succeed."""
        answer = self.request(method, params, **kw)
        if "error" in answer:
            raise AssertionError(f"{method} failed: {answer['error']}")
        return answer["result"]

    # --- a session -----------------------------------------------------------------------
    def initialize(self, wait_restored: bool = True, init_options=None) -> dict:
        root_uri = self.root.resolve().as_uri()
        result = self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
                "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}, "applyEdit": True}},
                "initializationOptions": init_options,
            },
        )
        self.notify("initialized", {})
        if wait_restored:
            self.restored = self.wait_note("stet/restored")
        return result

    def wait_note(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        skipped = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {method} in {timeout} s; {self.tail()}")
                try:
                    msg = self.notes.get(timeout=min(left, 0.2))
                except queue.Empty:
                    if self.closed:
                        raise Dead(f"server gone before {method}; {self.tail()}")
                    continue
                if msg["method"] == method:
                    return msg["params"]
                skipped.append(msg)
        finally:
            for m in skipped:
                self.notes.put(m)

    def alive(self) -> bool:
        """The server answers a plain request."""
        answer = self.request("stet/listHunks", {}, timeout=60)
        return "result" in answer

    def tail(self, n: int = 2000) -> str:
        self.stderr.seek(0)
        data = self.stderr.read().decode(errors="replace")
        return "server stderr: ..." + data[-n:] if data else "server stderr empty"

    def stop(self, timeout: float = 30) -> int | None:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
            except (Dead, TimeoutError):
                pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the server did not exit after shutdown/exit; {self.tail()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
