"""A scripted ACP client: it plays the editor for an ACP agent (or for `stet acp -- AGENT`) run as a
subprocess, speaking JSON-RPC 2.0 as newline-delimited JSON on its stdin/stdout, written from the
protocol's schema (agentclientprotocol.com, protocol version 1) with no SDK.

What it does, as an editor does:
- `initialize` (protocolVersion 1, clientCapabilities fs.readTextFile / fs.writeTextFile true,
  terminal false), `session/new` (cwd, mcpServers []), `session/prompt` (one text block), and
  `session/cancel`;
- answers the agent's `fs/read_text_file` (line / limit honoured) and `fs/write_text_file` (the whole
  content, written atomically: a temp file beside it, renamed) against the real files;
- answers `session/request_permission` from a script: each request takes the next entry of
  `permissions` ("allow_once", "allow_always", "reject_once", "reject_always", "cancelled", or a
  function of the request's params returning the `outcome` object); "allow_once" once the script is
  used up;
- answers any other request of the agent with JSON-RPC's "method not found".

It records every message both ways (`transcript`: Entry(direction, time, body, files)), `files` being
the content of each watched file at the moment the message arrived (before the client acted on it),
and calls `on_message(entry)` then, in the reading thread, before the message is handled: a test can
look at the review at the moment the editor sees a change (e.g. run `stet status --json`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

PROTOCOL_VERSION = 1
CAPABILITIES = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False}

Outcome = str | Callable[[dict], dict]


class AcpError(Exception):
    """The agent answered a request with a JSON-RPC error (`error` holds it), or did not in time."""

    def __init__(self, method: str, error: Any):
        super().__init__(f"{method}: {error}")
        self.error = error


@dataclass
class Entry:
    direction: str  # "in" (the agent sent it) or "out" (the client sent it)
    time: float  # time.monotonic() when it was read or written
    body: Any  # the parsed message (the raw line when it was not JSON)
    files: dict[str, str | None] = field(default_factory=dict)  # watched path -> content then (None: absent)

    @property
    def method(self) -> str | None:
        return self.body.get("method") if isinstance(self.body, dict) else None

    @property
    def params(self) -> dict:
        p = self.body.get("params") if isinstance(self.body, dict) else None
        return p if isinstance(p, dict) else {}

    @property
    def update(self) -> dict:
        """A `session/update` notification's `update` object ({} for any other message)."""
        u = self.params.get("update") if self.method == "session/update" else None
        return u if isinstance(u, dict) else {}


class AcpClient:
    def __init__(
        self,
        cmd: list[str],
        cwd: Path,
        env: dict[str, str],
        *,
        permissions: list[Outcome] | None = None,
        watch: list[Path] = (),  # type: ignore[assignment]
        on_message: Callable[[Entry], None] | None = None,
        stderr: Path | None = None,
    ):
        self.cmd, self.cwd, self.env = cmd, cwd, env
        self.permissions: list[Outcome] = list(permissions or [])
        self.watch = [Path(p) for p in watch]
        self.on_message = on_message
        self.stderr_path = stderr
        self.transcript: list[Entry] = []
        self.errors: list[str] = []  # what went wrong in the reading thread
        self.unanswered: list[tuple[str, str]] = []  # requests of the agent answered to a closed stdin
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._next_id = 0
        self._waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        self._closed = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr_file: TextIO | None = None

    # The process.

    def start(self, **popen: Any) -> AcpClient:
        """Start the command in a process group of its own: `close` ends what it leaves behind
        (an agent's own processes outlive it: Codex's adapter's native binary does)."""
        popen.setdefault("start_new_session", True)
        self._stderr_file = open(self.stderr_path, "a") if self.stderr_path else None  # noqa: SIM115
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file or subprocess.DEVNULL,
            **popen,
        )
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def __enter__(self) -> AcpClient:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, grace: float = 10) -> int | None:
        """Close the agent's stdin (the editor went away) and wait for it to exit; killed after
        `grace`; then whatever is left in its process group killed too."""
        if self.proc is None:
            return None
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self._stderr_file:
            self._stderr_file.close()
        return code

    # Sending.

    def _send(self, body: dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        line = json.dumps(body, separators=(",", ":")).encode() + b"\n"
        with self._write_lock:
            self._record("out", body)
            self.proc.stdin.write(line)
            self.proc.stdin.flush()

    def request(self, method: str, params: dict, timeout: float = 120) -> Any:
        """Send a request and wait for its response: the result, or AcpError."""
        with self._lock:
            self._next_id += 1
            rid = self._next_id
            done: tuple[threading.Event, list[Any]] = (threading.Event(), [])
            self._waiting[rid] = done
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while not done[0].wait(0.1):
            if time.monotonic() > deadline:
                raise AcpError(method, f"no answer in {timeout} s")
            if self._closed.is_set():
                raise AcpError(method, "the agent's stdout closed before it answered")
        (response,) = done[1]
        if "error" in response:
            raise AcpError(method, response["error"])
        return response.get("result")

    def notify(self, method: str, params: dict) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    # ACP's client side.

    def initialize(self, **more: Any) -> dict:
        params = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": CAPABILITIES, **more}
        return self.request("initialize", params, timeout=60)

    def new_session(self, cwd: Path | None = None, timeout: float = 120) -> str:
        result = self.request("session/new", {"cwd": str(cwd or self.cwd), "mcpServers": []}, timeout)
        return result["sessionId"]

    def prompt(self, session: str, text: str, timeout: float = 240) -> dict:
        """One turn: the prompt's response ({"stopReason": ...}) once the agent ended it."""
        prompt = [{"type": "text", "text": text}]
        return self.request("session/prompt", {"sessionId": session, "prompt": prompt}, timeout)

    def cancel(self, session: str) -> None:
        self.notify("session/cancel", {"sessionId": session})

    # Reading.

    def _record(self, direction: str, body: Any) -> Entry:
        files = {str(p): _content(p) for p in self.watch}
        entry = Entry(direction, time.monotonic(), body, files)
        with self._lock:
            self.transcript.append(entry)
        return entry

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            for raw in self.proc.stdout:
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace").rstrip("\n")
                entry = self._record("in", body)
                if self.on_message is not None:
                    try:
                        self.on_message(entry)
                    except Exception as e:  # an assertion of the test's: kept for the test to raise
                        self.errors.append(f"on_message: {e!r}")
                if isinstance(body, dict):
                    self._handle(body)
        except Exception as e:
            self.errors.append(f"reader: {e!r}")
        finally:
            self._closed.set()

    def _handle(self, body: dict) -> None:
        method = body.get("method")
        if method is None and "id" in body:
            with self._lock:
                waiting = self._waiting.pop(body["id"], None)
            if waiting is not None:
                waiting[1].append(body)
                waiting[0].set()
            return
        if "id" not in body or not isinstance(method, str):
            return  # a notification: recorded, nothing to answer
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        try:
            answer: dict = {"result": self._answer(method, params)}
        except _Refused as e:
            answer = {"error": e.error}
        except Exception as e:
            answer = {"error": {"code": -32603, "message": f"the scripted client failed: {e!r}"}}
        try:
            self._send({"jsonrpc": "2.0", "id": body["id"], **answer})
        except OSError as e:  # the agent's stdin closed (it exited, or was killed): the answer is lost
            self.unanswered.append((method, repr(e)))

    def _answer(self, method: str, params: dict) -> Any:
        if method == "fs/read_text_file":
            path = Path(params["path"])
            if not path.is_file():
                raise _Refused({"code": -32002, "message": f"Resource not found: {path}"})
            lines = path.read_text().splitlines(keepends=True)
            start = max(int(params.get("line") or 1), 1) - 1
            limit = params.get("limit")
            chosen = lines[start:] if limit is None else lines[start : start + int(limit)]
            return {"content": "".join(chosen)}
        if method == "fs/write_text_file":
            write_atomically(Path(params["path"]), params["content"])
            return None
        if method == "session/request_permission":
            scripted: Outcome = self.permissions.pop(0) if self.permissions else "allow_once"
            return {"outcome": choose(scripted, params)}
        raise _Refused({"code": -32601, "message": f"Method not found: {method}"})

    # What was seen.

    def received(self, method: str | None = None) -> list[Entry]:
        with self._lock:
            return [e for e in self.transcript if e.direction == "in" and (method is None or e.method == method)]

    def updates(self, kind: str | None = None) -> list[Entry]:
        """The session/update notifications received (of `sessionUpdate` kind `kind`)."""
        return [e for e in self.received("session/update") if kind is None or e.update.get("sessionUpdate") == kind]

    def wait_for(self, predicate: Callable[[AcpClient], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen in {timeout} s; the last messages: {self.tail()}")
            time.sleep(0.05)

    def tail(self, n: int = 8) -> list[Any]:
        with self._lock:
            return [(e.direction, e.body) for e in self.transcript[-n:]]

    def dump(self, path: Path, replace: dict[str, str]) -> None:
        """The transcript as JSON lines {"dir", "msg"} (no times, the client's files not included),
        each string of `replace`'s keys (the test's folders, the session id) replaced by its value."""
        lines = []
        for e in self.transcript:
            text = json.dumps({"dir": e.direction, "msg": e.body}, sort_keys=True)
            for real, placeholder in replace.items():
                text = text.replace(json.dumps(real)[1:-1], placeholder)
            lines.append(text + "\n")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))


class _Refused(Exception):
    def __init__(self, error: dict):
        super().__init__(error["message"])
        self.error = error


def choose(scripted: Outcome, params: dict) -> dict:
    """The `outcome` for a permission request: a function's own, "cancelled", or the option of the
    kind named (its exact kind, else one of the same allow/reject sense)."""
    if callable(scripted):
        return scripted(params)
    if scripted == "cancelled":
        return {"outcome": "cancelled"}
    options = [o for o in params.get("options") or [] if isinstance(o, dict)]
    exact = [o for o in options if o.get("kind") == scripted]
    alike = [o for o in options if str(o.get("kind", "")).startswith(scripted.split("_")[0])]
    chosen = (exact or alike or [{}])[0]
    if "optionId" not in chosen:
        raise ValueError(f"no {scripted} option among {options}")
    return {"outcome": "selected", "optionId": chosen["optionId"]}


def write_atomically(path: Path, content: str) -> None:
    """The whole content, as an editor saves: a temp file in the same folder, then renamed over it
    (the file's mode kept when it existed)."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(content)
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _content(path: Path) -> str | None:
    try:
        return path.read_text()
    except (FileNotFoundError, IsADirectoryError):
        return None
    except UnicodeDecodeError:
        return path.read_bytes().decode("utf-8", "replace")


def descendants(pid: int) -> list[int]:
    """The processes under `pid` (children first), from /proc: the agent `stet acp` started, and
    whatever that agent started."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = list(parents.get(pid, []))
    while todo:
        child = todo.pop(0)
        found.append(child)
        todo.extend(parents.get(child, []))
    return found
