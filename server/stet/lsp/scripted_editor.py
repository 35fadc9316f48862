"""A scripted editor for `stet demo`: a pygls client that starts `stet serve`, keeps its
buffers and answers the server's applyEdit as an editor would."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from ..domain.edits import apply_text_edits
from .protocol import make_converter


class Editor:
    """A scripted editor: a pygls client that keeps its buffers and answers applyEdit."""

    def __init__(self, root: Path, env: dict[str, Any] | None = None) -> None:
        self.root = root
        self.env = {**os.environ, **(env or {})}
        self.docs: dict[str, list[Any]] = {}
        self.client = LanguageClient("stet-demo-editor", "1", converter_factory=make_converter)
        self.restored: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        editor = self

        def restored(ls: LanguageClient, params: Any) -> None:
            if not editor.restored.done():
                editor.restored.set_result(params)

        def diagnostics(ls: LanguageClient, params: Any) -> None:
            pass  # a real editor would draw them

        def hunks_changed(ls: LanguageClient, params: Any) -> None:
            pass

        def apply(ls: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            for change in params.edit.document_changes or []:
                if not isinstance(change, types.TextDocumentEdit):
                    return types.ApplyWorkspaceEditResult(applied=False)  # Stet sends text edits only
                uri = change.text_document.uri
                text, version = editor.docs[uri]
                if change.text_document.version != version:
                    return types.ApplyWorkspaceEditResult(applied=False)
                edits = [
                    (ls.protocol._converter.unstructure(e.range), e.new_text)
                    for e in change.edits
                    if isinstance(e, types.TextEdit)
                ]
                new = apply_text_edits(text, edits)
                editor.docs[uri] = [new, version + 1]
                ls.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                        [types.TextDocumentContentChangeWholeDocument(text=new)],
                    )
                )
            return types.ApplyWorkspaceEditResult(applied=True)

        self.client.feature("stet/restored")(restored)
        self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(diagnostics)
        self.client.feature("stet/hunksChanged")(hunks_changed)
        self.client.feature(types.WORKSPACE_APPLY_EDIT)(apply)

    @property
    def process(self) -> asyncio.subprocess.Process:
        process = self.client._server
        if process is None:
            raise RuntimeError("the server is not started")
        return process

    @property
    def pid(self) -> int:
        return self.process.pid

    async def start(self) -> dict[str, Any]:
        await self.client.start_io(sys.executable, "-m", "stet", "serve", env=self.env, cwd=str(self.root))
        self._drain = asyncio.ensure_future(self._drain_stderr())
        root_uri = self.root.as_uri()
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(
                        apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
                    )
                ),
                root_uri=root_uri,
                workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="demo")],
            )
        )
        self.client.initialized(types.InitializedParams())
        for uri, (text, version) in self.docs.items():
            self.client.text_document_did_open(
                types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", version, text))
            )
        return await asyncio.wait_for(self.restored, 30)

    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        while stream and await stream.readline():
            pass

    def open(self, name: str) -> str:
        uri = (self.root / name).as_uri()
        text = (self.root / name).read_text()
        self.docs[uri] = [text, 1]
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
        )
        return uri

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await asyncio.wait_for(self.client.protocol.send_request_async(method, params), 30)

    async def command(self, name: str, params: dict[str, Any]) -> Any:
        return await asyncio.wait_for(
            self.client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=[params])),
            30,
        )

    async def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        await self.process.wait()
        await self.client.stop()  # type: ignore[no-untyped-call]

    async def drop(self) -> None:
        """Let go of a server that died: no shutdown to ask for."""
        await self.client.stop()  # type: ignore[no-untyped-call]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()  # type: ignore[no-untyped-call]
