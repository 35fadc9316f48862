"""The language server process: pygls with Stet's protocol and wire, the editor port the
review applies edits through, and publishing hunks as diagnostics and notifications.
The request handlers are in handlers.py."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import Any, cast

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..errors import StetError
from ..present import hunk_json
from ..review import Review
from ..review.reconnecting import Reconnecting
from ..runtime.live import Live
from . import present, wire
from .protocol import StetProtocol, make_converter

log = logging.getLogger(__name__)

PUBLISH_DELAY = 0.02  # seconds: changes within this window are published together


class StetServer(LanguageServer):
    def __init__(self, db_path: str | None = None):
        super().__init__("stet", __version__, protocol_cls=StetProtocol, converter_factory=make_converter)
        self.db_path = db_path
        # The review or why there is none, made by initialize (attach.Opening): see `review`.
        self.handle: Reconnecting | None = None
        # attach.Opening, made by initialize: how the review is opened, now or later (typed
        # loosely: attach imports this module)
        self.opening: Any = None
        self.notice: str | None = None
        self.live: Live | None = None
        self._dirty: set[str] = set()
        # Set by the shutdown request: from then on nothing more is sent (the client may have
        # closed its end already) and nothing new is started.
        self.stopping = False

    @property
    def review(self) -> Review | None:
        return self.handle.review if self.handle is not None else None

    @property
    def store_error(self) -> StetError | None:
        """Why there is no review."""
        return self.handle.error if self.handle is not None else None

    # The editor port of the review: apply an edit to an open buffer.
    async def apply_edit(
        self, uri: str, version: int | None, edits: list[tuple[dict[str, Any], str]], label: str
    ) -> bool:
        text_edits = [
            types.TextEdit(
                range=types.Range(
                    types.Position(r["start"]["line"], r["start"]["character"]),
                    types.Position(r["end"]["line"], r["end"]["character"]),
                ),
                new_text=text,
            )
            for r, text in edits
        ]
        caps = self.client_capabilities.workspace
        versioned = bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)
        if versioned:
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), text_edits
                    )
                ]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: text_edits})
        result = await self.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
        return bool(result and result.applied)

    def publish(self, uris: set[str]) -> None:
        """Show the hunks of these uris again; bursts of changes are sent once."""
        if self.stopping:
            return
        if not self._dirty:
            asyncio.get_running_loop().call_later(PUBLISH_DELAY, self._flush)
        self._dirty |= uris

    def _flush(self) -> None:
        review, uris, self._dirty = self.review, self._dirty, set()
        if review is None or self.stopping:
            return
        for uri in sorted(uris):
            hunks = review.list(uri)
            client_uri = review.client_uri(uri)
            doc = review.doc(uri)
            end = doc.end() if doc else None
            diagnostics = [present.diagnostic_json(h, end, self._diagnostic_data) for h in hunks if h.shown]
            self.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, {"uri": client_uri, "diagnostics": diagnostics})
            self.notify_json("stet/hunksChanged", {"uri": uri, "hunks": hunk_json.states(hunks)})
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            future = self.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)
            future.add_done_callback(lambda f: f.cancelled() or f.exception())  # an error here is harmless

    @property
    def _diagnostic_data(self) -> bool:
        td = self.client_capabilities.text_document
        return bool(td and td.publish_diagnostics and td.publish_diagnostics.data_support)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification whose params are already plain JSON (no converter pass)."""
        if self.stopping:
            return
        self.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    def shutdown(self) -> None:
        if self.review is not None:
            self.review.stop_now()
        super().shutdown()  # type: ignore[no-untyped-call]

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve on stdio with Stet's own reading loop (see wire.py: broken frames resynchronise,
        unparsable bodies get a Parse error)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        protocol = cast(StetProtocol, self.protocol)
        try:
            asyncio.run(
                wire.read_messages(
                    stdin or sys.stdin.buffer,
                    self._stop_event,
                    protocol.handle_message,
                    lambda body: wire.load(body, protocol.structure_message),
                    protocol.send_error,
                )
            )
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)
