"""A lean LSP client over stdio for benchmarks: it plays the editor for a real server process.

Deliberately small and independent of Stet's code (and of pygls), so that the same client
drives both Stet and the floor server and adds the same, small cost to both. It keeps a copy
of each open document, answers `workspace/applyEdit` by applying the edit to that copy and
reporting it with an incremental `didChange` (sent before the answer, as VS Code does), and
answers every other server request with null.

Documents are ASCII in the benchmarks, so UTF-16 columns are string indexes.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from typing import Any

CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "rename", "delete"]},
        "workspaceFolders": True,
        "executeCommand": {"dynamicRegistration": False},
        "codeLens": {"refreshSupport": True},
    },
    "textDocument": {
        "synchronization": {"dynamicRegistration": False, "didSave": True},
        "publishDiagnostics": {"relatedInformation": True},
        "codeLens": {"dynamicRegistration": False},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}},
    },
    "window": {"workDoneProgress": True},
}


class LspError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def split_keep(text: str) -> list[str]:
    return text.splitlines(keepends=True)


class Doc:
    def __init__(self, text: str, version: int):
        self.lines = split_keep(text)
        self.version = version

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def apply(self, rng: dict, new_text: str) -> None:
        sl, sc = rng["start"]["line"], rng["start"]["character"]
        el, ec = rng["end"]["line"], rng["end"]["character"]
        lines = self.lines
        n = len(lines)
        prefix = lines[sl][:sc] if sl < n else ""
        suffix = lines[el][ec:] if el < n else ""
        lines[sl : min(el + 1, n)] = split_keep(prefix + new_text + suffix)


class Server:
    """One server process and the editor in front of it."""

    def __init__(self, argv: list[str], cwd: str, env: dict | None = None, stderr_path: str | None = None):
        self.argv = argv
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.stderr_path = stderr_path
        self.proc: asyncio.subprocess.Process | None = None
        self.docs: dict[str, Doc] = {}
        self.handlers: dict[str, Callable[[Any], None]] = {}
        self.notifications: dict[str, int] = {}
        self.bytes_in = 0
        self.bytes_out = 0
        self.apply_edits = 0
        self.request_seen: dict[str, float] = {}  # server request method -> when last read
        self.apply_handling_s = 0.0  # the client's own time for the last applyEdit (apply, didChange, answer)
        self.refuse_edits = False
        self.spawned_at = 0.0
        self._next_id = 0
        self._pending: dict[int, asyncio.Future] = {}
        self._reader: asyncio.Task | None = None
        self._waiters: dict[str, list[asyncio.Future]] = {}
        self._stderr = None

    # --- process ------------------------------------------------------------------------
    async def spawn(self) -> None:
        self._stderr = open(self.stderr_path, "ab") if self.stderr_path else asyncio.subprocess.DEVNULL
        self.spawned_at = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            cwd=self.cwd,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr,
            limit=1 << 26,
        )
        self._reader = asyncio.ensure_future(self._read_loop())

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def initialize(self, root: str, init_options: dict | None = None) -> dict:
        root_uri = "file://" + os.path.realpath(root)
        result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
                "capabilities": CAPABILITIES,
                "initializationOptions": init_options,
            },
        )
        self.notify("initialized", {})
        return result

    async def stop(self) -> None:
        """shutdown + exit, then wait for the process."""
        try:
            await asyncio.wait_for(self.request("shutdown", None), 60)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 60)
        except (TimeoutError, LspError, ConnectionError):
            self.proc.kill()
            await self.proc.wait()
        await self._close()

    async def kill(self) -> None:
        self.proc.kill()
        await self.proc.wait()
        await self._close()

    async def _close(self) -> None:
        if self._reader:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
        if self._stderr not in (None, asyncio.subprocess.DEVNULL):
            self._stderr.close()

    def rss_kb(self) -> int:
        return _status_kb(self.proc.pid, "VmRSS")

    def hwm_kb(self) -> int:
        return _status_kb(self.proc.pid, "VmHWM")

    def cpu_s(self) -> float:
        """CPU time (user + system) the server process has used so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def io(self) -> dict[str, int]:
        out = {}
        with open(f"/proc/{self.proc.pid}/io") as f:
            for line in f:
                k, v = line.split(":")
                out[k] = int(v)
        return out

    # --- wire ---------------------------------------------------------------------------
    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        self.bytes_out += len(data)
        self.proc.stdin.write(data)

    async def drain(self) -> None:
        await self.proc.stdin.drain()

    def request_future(self, method: str, params: Any) -> asyncio.Future:
        self._next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return fut

    async def request(self, method: str, params: Any) -> Any:
        return (await self.timed_request(method, params))[0]

    async def timed_request(self, method: str, params: Any) -> tuple[Any, float]:
        """(result, seconds from sending to the answer being read off the pipe)."""
        t0 = time.perf_counter()
        fut = self.request_future(method, params)
        await self.drain()
        result, t1 = await fut
        return result, t1 - t0

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_notification(self, method: str) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(method, []).append(fut)
        return fut

    async def _read_loop(self) -> None:
        reader = self.proc.stdout
        try:
            while True:
                length = 0
                while True:
                    line = await reader.readline()
                    if not line:
                        raise ConnectionError("server closed its output")
                    self.bytes_in += len(line)
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                now = time.perf_counter()
                self.bytes_in += length
                self._dispatch(json.loads(body), now)
        except ConnectionError as exc:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(exc)

    def _dispatch(self, msg: dict, now: float) -> None:
        method = msg.get("method")
        if method is None:
            fut = self._pending.pop(msg.get("id"), None)
            if fut is None or fut.done():
                return
            if "error" in msg and msg["error"] is not None:
                fut.set_exception(LspError(msg["error"].get("code", 0), msg["error"].get("message", "")))
            else:
                fut.set_result((msg.get("result"), now))
            return
        if "id" in msg:
            self.request_seen[method] = now
            result = self._apply(msg["params"]) if method == "workspace/applyEdit" else None
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            if method == "workspace/applyEdit":
                self.apply_handling_s = time.perf_counter() - now
            return
        self.notifications[method] = self.notifications.get(method, 0) + 1
        for fut in self._waiters.pop(method, []):
            if not fut.done():
                fut.set_result((msg.get("params"), now))
        handler = self.handlers.get(method)
        if handler:
            handler(msg.get("params"))

    # --- the editor ---------------------------------------------------------------------
    def open(self, uri: str, text: str, version: int = 1, language: str = "python") -> None:
        self.docs[uri] = Doc(text, version)
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}},
        )

    def change(self, uri: str, edits: list[tuple[dict, str]]) -> None:
        """Edit an open document (edits given last position first) and tell the server."""
        doc = self.docs[uri]
        for rng, text in edits:
            doc.apply(rng, text)
        doc.version += 1
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": doc.version},
                "contentChanges": [{"range": rng, "text": text} for rng, text in edits],
            },
        )

    def save(self, uri: str, path: str) -> None:
        with open(path, "w", newline="") as f:
            f.write(self.docs[uri].text)
        self.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

    def _apply(self, params: dict) -> dict:
        self.apply_edits += 1
        if self.refuse_edits:
            return {"applied": False, "failureReason": "refused"}
        edit = params["edit"]
        work = []
        for change in edit.get("documentChanges") or []:
            uri = change["textDocument"]["uri"]
            version = change["textDocument"].get("version")
            doc = self.docs.get(uri)
            if doc is None or (version is not None and version != doc.version):
                return {"applied": False, "failureReason": "version mismatch"}
            work.append((uri, change["edits"]))
        for uri, edits in (edit.get("changes") or {}).items():
            if uri not in self.docs:
                return {"applied": False, "failureReason": "not open"}
            work.append((uri, edits))
        for uri, edits in work:
            ordered = sorted(
                ((e["range"], e["newText"]) for e in edits),
                key=lambda p: (p[0]["start"]["line"], p[0]["start"]["character"]),
                reverse=True,
            )
            self.change(uri, ordered)
        return {"applied": True}


def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def rng(sl: int, sc: int, el: int, ec: int) -> dict:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
