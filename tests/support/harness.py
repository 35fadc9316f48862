"""Drive the real `stet serve` process as an editor would, over stdio, with pytest-lsp.

The editor side here is deliberately independent of Stet's code: it keeps its own copy
of each open buffer, applies `workspace/applyEdit` to it with its own UTF-16 arithmetic
and reports the change back with `didChange`, like VS Code (or, with `late_changes`,
like Neovim, which answers before its didChange).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

SERVER = [sys.executable, "-m", "stet", "serve"]


def _raw(obj: dict, cls: type) -> Any:
    return cls(**{f: obj.get(f) for f in ("id", "method", "jsonrpc", "params", "result") if f in cls.__annotations__})


def _converter():
    conv = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, _raw)
    return conv


class ServerDied(Exception):
    """The server process exited before answering (a fault point or a kill)."""


def uri(path: os.PathLike | str) -> str:
    return Path(os.path.realpath(path)).as_uri()


def _offset(text: str, line: int, character: int) -> int:
    """Offset in `text` of an LSP position (UTF-16 columns), written without Stet's helpers."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    pos = 0
    for i in range(min(line, len(lines))):
        pos += len(lines[i])
    if line >= len(lines):
        return len(text)
    body = lines[line].rstrip("\r\n")
    units = body.encode("utf-16-le")[: character * 2].decode("utf-16-le", errors="ignore")
    return pos + len(units)


def apply_lsp_edits(text: str, edits: list[tuple[dict, str]]) -> str:
    """The edits of one LSP TextEdit[], made last first (of those at one position too: their
    texts appear in the order of the array)."""
    spans = sorted(
        (
            (
                _offset(text, r["start"]["line"], r["start"]["character"]),
                k,
                _offset(text, r["end"]["line"], r["end"]["character"]),
                t,
            )
            for k, (r, t) in enumerate(edits)
        ),
        reverse=True,
    )
    for a, _, b, t in spans:
        text = text[:a] + t + text[b:]
    return text


def rng(sl: int, sc: int, el: int, ec: int) -> dict:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


class Session:
    """One editor window with a real Stet server behind it."""

    def __init__(
        self,
        root: Path,
        env: dict[str, str] | None = None,
        *,
        late_changes: bool | float = False,
        refuse_edits: bool = False,
        capabilities: str = "visual_studio_code",
        init_options: dict | None = None,
        folders: list[Path] | None = None,
    ):
        self.root = root
        self.env = {**os.environ, **(env or {})}
        self.late_changes = late_changes
        self.refuse_edits = refuse_edits
        self.capabilities = capabilities
        self.init_options = init_options
        self.folders = folders or [root]
        self.client: LanguageClient | None = None
        self.docs: dict[str, list] = {}  # uri -> [text, version]
        self.changed: list[dict] = []
        self.changed_buffers: list[str | None] = []  # the buffer of each `changed` entry's uri as it arrived
        self.restored: asyncio.Future | None = None
        self.apply_requests = 0
        self.lens_refreshes = 0
        self.registrations: list = []
        self._late: dict[str, list] = {}  # uri -> changes made, not reported yet (late_changes)
        self.hold: asyncio.Event | None = None  # set: applyEdit answered only once it is set
        self._ids = 0

    @property
    def messages(self) -> list[types.ShowMessageParams]:
        return self.client.messages

    @property
    def pid(self) -> int:
        return self.client._server.pid

    async def start(self, wait_restored: bool = True) -> dict | None:
        client = LanguageClient(converter_factory=_converter)
        register_lsp_features(client)
        self.client = client
        self.restored = asyncio.get_running_loop().create_future()
        session = self

        @client.feature("stet/restored")
        def on_restored(ls, params):
            if not session.restored.done():
                session.restored.set_result(params)

        @client.feature("stet/hunksChanged")
        def on_changed(ls, params):
            session.changed.append(params)
            session.changed_buffers.append(session.docs.get(params["uri"], [None])[0])

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(ls, params):
            session.registrations.extend(params.registrations)

        @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def on_lens_refresh(ls, params):
            session.lens_refreshes += 1

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        async def on_apply(ls, params: types.ApplyWorkspaceEditParams):
            session.apply_requests += 1
            if session.hold is not None:  # the server waits for this answer, its decision unfinished
                await session.hold.wait()
            return session._apply(params.edit)

        await client.start_io(*SERVER, env=self.env, cwd=str(self.root))
        caps = client_capabilities(self.capabilities)
        self.init_result = await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=uri(self.root),
                workspace_folders=[types.WorkspaceFolder(uri=uri(f), name=f.name) for f in self.folders],
                initialization_options=self.init_options,
            )
        )
        for u, (text, version) in self.docs.items():  # an editor re-opens its buffers
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(types.TextDocumentItem(u, "text", version, text))
            )
        if wait_restored:
            return await asyncio.wait_for(self.restored, 60)
        return None

    def _apply(self, edit: types.WorkspaceEdit) -> types.ApplyWorkspaceEditResult:
        if self.refuse_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="refused by test")
        work = []
        for change in edit.document_changes or []:
            u = change.text_document.uri
            if u not in self.docs or (
                change.text_document.version is not None and change.text_document.version != self.docs[u][1]
            ):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
            work.append((u, change.edits))
        for u, edits in (edit.changes or {}).items():
            if u not in self.docs:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            work.append((u, edits))
        for u, edits in work:
            pairs = [
                (rng(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.new_text)
                for e in edits
            ]
            # Like a real editor, the buffer (and its version) changes at once; only the
            # didChange that reports it may come later.
            ordered, version = self._edit(u, pairs)
            if self.late_changes:
                # True: Neovim-like (~150 ms after answering); a number: that many seconds, e.g.
                # past the server's wait, as eglot sends it only once Emacs is idle again.
                delay = 0.15 if self.late_changes is True else float(self.late_changes)
                self._late.setdefault(u, []).append((ordered, version))
                asyncio.get_running_loop().call_later(delay, self._flush_late, u)
            else:
                self._notify_change(u, ordered, version)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _edit(self, u: str, pairs: list[tuple[dict, str]]) -> tuple[list[tuple[dict, str]], int]:
        # Incremental changes, last position first, so each range is valid when applied; of
        # edits at one position the last first too, as editors do (LSP: inserts at one position
        # appear in the order of the array, and an insertion goes above a change starting there).
        ordered = [
            p
            for _, p in sorted(
                enumerate(pairs),
                key=lambda ip: (ip[1][0]["start"]["line"], ip[1][0]["start"]["character"], ip[0]),
                reverse=True,
            )
        ]
        for r, t in ordered:
            self.docs[u][0] = apply_lsp_edits(self.docs[u][0], [(r, t)])
        self.docs[u][1] += 1
        return ordered, self.docs[u][1]

    def _send_change(self, u: str, pairs: list[tuple[dict, str]]) -> None:
        self._flush_late(u)  # an editor reports its changes in the order they were made
        self._notify_change(u, *self._edit(u, pairs))

    def _flush_late(self, u: str) -> None:
        for ordered, version in self._late.pop(u, []):
            self._notify_change(u, ordered, version)

    def _notify_change(self, u: str, ordered: list[tuple[dict, str]], version: int) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=u, version=version),
                [
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            types.Position(r["start"]["line"], r["start"]["character"]),
                            types.Position(r["end"]["line"], r["end"]["character"]),
                        ),
                        text=t,
                    )
                    for r, t in ordered
                ],
            )
        )

    # --- editor actions --------------------------------------------------------------
    def open(self, path: Path) -> str:
        u = uri(path)
        text = read(path)
        self.docs[u] = [text, 1]
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(u, "text", 1, text)))
        return u

    def type(self, path_or_uri, r: dict, text: str) -> None:
        u = path_or_uri if str(path_or_uri).startswith("file:") else uri(path_or_uri)
        self._send_change(u, [(r, text)])

    def text(self, path_or_uri) -> str:
        u = path_or_uri if str(path_or_uri).startswith("file:") else uri(path_or_uri)
        return self.docs[u][0]

    def save(self, path: Path) -> None:
        u = uri(path)
        with open(path, "w", newline="") as f:
            f.write(self.docs[u][0])
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(u)))

    def close(self, path: Path) -> None:
        u = uri(path)
        del self.docs[u]
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(u)))

    # --- requests --------------------------------------------------------------------
    async def request(self, method: str, params: Any) -> Any:
        """Send a request as raw JSON and return the raw JSON result (or raise its error).

        Raw both ways: malformed params can be sent on purpose, and results are read as
        the wire carries them (lsprotocol's client-side decoding of some results is lossy).
        """
        self._ids += 1
        msg_id = f"raw-{self._ids}"
        future: concurrent.futures.Future = concurrent.futures.Future()
        proto = self.client.protocol
        proto._request_futures[msg_id] = future
        proto._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self._unless_dead(asyncio.wrap_future(future))

    async def _unless_dead(self, awaitable, timeout: float = 60) -> Any:
        """The answer, or ServerDied as soon as the server process exits without one."""
        answer = asyncio.ensure_future(awaitable)
        death = asyncio.ensure_future(self.client._server.wait())
        done, _ = await asyncio.wait({answer, death}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if answer in done:
            death.cancel()
            exc = answer.exception()
            if isinstance(exc, RuntimeError) and "exited" in str(exc):
                raise ServerDied(self.client._server.returncode)  # pytest-lsp's way of saying it
            return answer.result()
        answer.cancel()
        if death in done:
            raise ServerDied(self.client._server.returncode)
        death.cancel()
        raise TimeoutError(f"no answer in {timeout} s")

    async def command(self, name: str, params: dict | None = None, *, raw_args: list | None = None) -> Any:
        args = raw_args if raw_args is not None else [params]
        return await self.request("workspace/executeCommand", {"command": name, "arguments": args})

    async def propose(self, proposal_id: str, changes: dict[str, list[tuple[dict, str]]], **extra) -> dict:
        edit = {"changes": {u: [{"range": r, "newText": t} for r, t in edits] for u, edits in changes.items()}}
        return await self.request("stet/propose", {"proposalId": proposal_id, "edit": edit, **extra})

    async def hunks(self, **filters) -> list[dict]:
        return (await self.request("stet/listHunks", filters))["hunks"]

    def files_changed(self, *paths: Path) -> None:
        """What an editor sends for files it saw change on disk (workspace/didChangeWatchedFiles)."""
        self.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams([types.FileEvent(uri(p), types.FileChangeType.Changed) for p in paths])
        )

    async def wait_quiet(self, seconds: float = 0.4) -> None:
        """A pause: between the polls of a condition, or before checking that something did
        NOT happen. To wait for what a notification started (didChange, didSave, didClose),
        poll for its outcome instead (`hunks_until`, `until`): a busy machine takes longer."""
        await asyncio.sleep(seconds)

    async def hunks_until(self, check, what: str, timeout: float = 30, **filters) -> list[dict]:
        """The hunks listed once `check(hunks)` holds (polled; a background step of the server,
        such as a status derived from a didChange, is stored a moment after the change)."""
        return await until(lambda: self._hunks_if(check, filters), what, timeout)

    async def _hunks_if(self, check, filters: dict) -> list[dict] | None:
        hunks = await self.hunks(**filters)
        return hunks if check(hunks) else None

    # --- ending ----------------------------------------------------------------------
    async def kill(self) -> None:
        """SIGKILL the server, as `kill -9` would, and forget the connection."""
        proc = self.client._server
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        await self.client.stop()

    async def kill_if_running(self) -> None:
        """End a test's server however the test went: killed if still running, else nothing."""
        if self.client is not None and self.client._server.returncode is None:
            await self.kill()

    async def died(self, timeout: float = 60) -> int:
        """Wait for the server to die on its own (a fault point); returns its exit code."""
        proc = self.client._server
        code = await asyncio.wait_for(proc.wait(), timeout)
        await self.client.stop()
        return code

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_session(), 60)
        await self.client.stop()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(text)
    return path


def read(path: Path) -> str:
    with open(path, newline="") as f:
        return f.read()


def effects_left(root: Path, *states: str) -> int:
    """Journaled edits of the workspace's SQLite store in these states (default: still to carry
    out, or living in an editor's unsaved buffer): what to wait for before a kill or a check."""
    states = states or ("pending", "unsaved")
    con = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        marks = ", ".join("?" * len(states))
        return con.execute(f"SELECT COUNT(*) FROM effects WHERE state IN ({marks})", states).fetchone()[0]
    finally:
        con.close()


async def until(check, what: str, timeout: float = 30, every: float = 0.05) -> Any:
    """Poll `check` (a function, or a coroutine function) until it gives something truthy, and
    return that; fail saying `what` after `timeout` seconds (generous: a busy machine is slow)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = check()
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(every)
