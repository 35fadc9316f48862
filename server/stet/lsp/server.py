"""The language server: pygls wiring that turns LSP messages into review calls."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.io_ import StdoutWriter
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from .. import __version__
from ..domain.text import lone_surrogate
from ..errors import InvalidParams, StetError, StoreUnavailable
from ..live import Live
from ..resume import render as render_resume
from ..review import Review
from ..store import Store
from ..tasks import Tasks
from ..workspace import Workspace, uri_to_path
from . import params as P
from . import present, wire

log = logging.getLogger(__name__)

PUBLISH_DELAY = 0.02  # seconds: changes within this window are published together

COMMANDS = (
    "stet.accept",
    "stet.reject",
    "stet.undo",
    "stet.acceptFile",
    "stet.rejectFile",
    "stet.acceptAll",
    "stet.rejectAll",
)


def _keep_raw(obj: dict, cls: type) -> Any:
    # Params of custom methods stay plain JSON (pygls would turn them into namedtuples and
    # lose keys that are not identifiers, such as the uris of WorkspaceEdit.changes).
    fields = {f: obj.get(f) for f in ("id", "method", "jsonrpc", "params", "result") if f in cls.__annotations__}
    return cls(**fields)


def make_converter():
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _keep_raw)
    return converter


class _Dropped:
    """A message already answered with an error; handle_message ignores it."""

    jsonrpc = "dropped"


def _valid_id(msg_id: Any) -> bool:
    return msg_id is None or isinstance(msg_id, (str, int, float)) and not isinstance(msg_id, bool)


class StetProtocol(LanguageServerProtocol):
    def _serialize_message(self, data: Any) -> Any:
        # Envelopes of custom messages carry plain JSON: hand it to json as it is instead of
        # letting cattrs walk every nested dict (10-100x slower on large hunk lists). Typed
        # lsprotocol objects nested inside still come back here and are unstructured.
        if isinstance(data, (JsonRPCNotification, JsonRPCRequestMessage)):
            out = {"jsonrpc": data.jsonrpc, "method": data.method, "params": data.params}
            if isinstance(data, JsonRPCRequestMessage):
                out["id"] = data.id
            return out
        if isinstance(data, JsonRPCResponseMessage):
            return {"jsonrpc": data.jsonrpc, "id": data.id, "result": data.result}
        return super()._serialize_message(data)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def structure_message(self, data: dict) -> Any:
        if isinstance(data, dict) and "jsonrpc" in data and "method" in data:  # a request or notification
            msg_id, has_id = data.get("id"), "id" in data
            if not _valid_id(msg_id):
                self.send_error(None, -32600, "Invalid Request: an id is a string or a number")
                return _Dropped()
            if not isinstance(data["method"], str):
                if has_id:
                    self.send_error(msg_id, -32600, "Invalid Request: the method must be a string")
                return _Dropped()
            where = lone_surrogate(data.get("params"))
            if where is not None:
                if has_id:
                    self.send_error(msg_id, -32602, f"Invalid params: {where} holds a lone UTF-16 surrogate, not text")
                return _Dropped()
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            # pygls would log and never answer: a request always gets an answer here.
            if isinstance(data, dict) and "id" in data and "method" in data:
                detail = str(exc.__cause__ or exc)
                error = JsonRpcInvalidParams(f"invalid params for {data.get('method')}: {detail}")
                self._send_response(data["id"], error=error.to_response_error())
            return _Dropped()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Dropped):
            return
        if not hasattr(message, "jsonrpc"):  # a number, a batch, an object without "jsonrpc"
            if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
                return  # a stray response: nobody to answer
            msg_id = message.get("id") if isinstance(message, dict) else None
            self.send_error(msg_id if _valid_id(msg_id) else None, -32600, "Invalid Request: not a JSON-RPC 2.0 message")
            return
        request = getattr(message, "method", None) is not None and getattr(message, "id", None) is not None
        if message.jsonrpc != "2.0":
            if request:
                self.send_error(message.id, -32600, 'Invalid Request: "jsonrpc" must be "2.0"')
            return
        if self._shutdown and request and message.method != types.EXIT:
            self.send_error(message.id, -32600, "Invalid Request: the server is shutting down")
            return
        super().handle_message(message)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        # Stet speaks UTF-16 columns, which every client supports (PROTOCOL.md ranges).
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        return (yield from super().lsp_initialize(params))

    # Stet keeps its own copy of open documents (LSP line breaks, UTF-16, anchors), so the
    # builtin handlers only forward to ours instead of also maintaining pygls' copy.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


class StetServer(LanguageServer):
    def __init__(self, db_path: str | None = None):
        super().__init__("stet", __version__, protocol_cls=StetProtocol, converter_factory=make_converter)
        self.db_path = db_path
        self.review: Review | None = None
        self.notice: str | None = None
        self.live: Live | None = None
        self._dirty: set[str] = set()

    # The editor port of the review: apply an edit to an open buffer.
    async def apply_edit(self, uri: str, version: int | None, edits: list[tuple[dict, str]], label: str) -> bool:
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
                    types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), text_edits)
                ]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: text_edits})
        result = await self.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
        return bool(result and result.applied)

    def publish(self, uris: set[str]) -> None:
        """Show the hunks of these uris again; bursts of changes are sent once."""
        if not self._dirty:
            asyncio.get_running_loop().call_later(PUBLISH_DELAY, self._flush)
        self._dirty |= uris

    def _flush(self) -> None:
        review, uris, self._dirty = self.review, self._dirty, set()
        if review is None:
            return
        for uri in sorted(uris):
            hunks = review.list(uri)
            client_uri = review.client_uris.get(uri, uri)
            doc = review.docs.get(uri)
            end = doc.end() if doc else None
            diagnostics = [present.diagnostic_json(h, end, self._diagnostic_data) for h in hunks if h.is_open]
            self.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, {"uri": client_uri, "diagnostics": diagnostics})
            self.notify_json("stet/hunksChanged", {"uri": uri, "hunks": [h.state() for h in hunks]})
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            future = self.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)
            future.add_done_callback(lambda f: f.cancelled() or f.exception())  # an error here is harmless

    @property
    def _diagnostic_data(self) -> bool:
        td = self.client_capabilities.text_document
        return bool(td and td.publish_diagnostics and td.publish_diagnostics.data_support)

    def notify_json(self, method: str, params: dict) -> None:
        """Send a notification whose params are already plain JSON (no converter pass)."""
        self.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    def shutdown(self) -> None:
        # aiosqlite's worker thread is not a daemon: stop it or the process never exits.
        review = self.review
        if review is not None and review.store is not None:
            review.store.conn.stop()
        super().shutdown()

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve on stdio with Stet's own reading loop (see wire.py: broken frames resynchronise,
        unparsable bodies get a Parse error)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        protocol = self.protocol
        try:
            asyncio.run(
                wire.read_messages(
                    stdin or sys.stdin.buffer,
                    self.thread_pool,
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


def guarded(fn):
    """Map Stet errors to their JSON-RPC codes; the server keeps serving."""

    @functools.wraps(fn)
    async def wrapper(ls: StetServer, *args):
        try:
            return await fn(ls, *args)
        except StetError as exc:
            raise JsonRpcException(message=exc.message, code=exc.code, data=exc.data) from None

    return wrapper


async def _ready(ls: StetServer) -> Review:
    review = ls.review
    if review is None:
        raise StoreUnavailable("the server is not initialized")
    if review.store is None:
        raise review.store_error or StoreUnavailable("the review store is not open")
    await review.ready.wait()
    if review.recovery_error is not None:
        raise review.recovery_error
    return review


def _roots(params: types.InitializeParams) -> list[str]:
    roots = []
    for folder in params.workspace_folders or []:
        try:
            roots.append(uri_to_path(folder.uri))
        except StetError:
            log.warning("ignoring workspace folder %s", folder.uri)
    if not roots and params.root_uri:
        try:
            roots.append(uri_to_path(params.root_uri))
        except StetError:
            pass
    if not roots and params.root_path:
        roots.append(params.root_path)
    return roots or [os.getcwd()]


def _watch_files_through_the_editor(ls: StetServer) -> None:
    """Ask the editor to report file changes too, where it offers that (it sees what it saves)."""
    caps = ls.client_capabilities.workspace
    if not (caps and caps.did_change_watched_files and caps.did_change_watched_files.dynamic_registration):
        return
    registration = types.Registration(
        id="stet-watch",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
        ),
    )
    future = ls.protocol.send_request(types.CLIENT_REGISTER_CAPABILITY, types.RegistrationParams([registration]))
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # an editor may refuse: harmless


def build(db_path: str | None = None) -> StetServer:
    server = StetServer(db_path)

    @server.feature(types.INITIALIZE)
    async def initialize(ls: StetServer, params: types.InitializeParams):
        roots = _roots(params)
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        db = options.get("db") if isinstance(options.get("db"), str) else None
        path = db or ls.db_path or os.environ.get("STET_DB") or os.path.join(roots[0], ".stet", "stet.db")
        review = Review(Workspace(roots), ls, ls.publish)
        ls.review = review
        try:
            opened = await Store.open(os.path.abspath(path))
            review.store = opened.store
            ls.notice = opened.notice
        except StoreUnavailable as exc:
            review.store_error = exc
            log.error("%s", exc)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: StetServer, params: types.InitializedParams):
        review = ls.review
        if review is None:
            return
        if ls.notice:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, ls.notice))
        if review.store is None:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"Stet: {review.store_error}"))
            ls.notify_json("stet/restored", {"files": 0, "counts": {}, "durationMs": 0, "error": str(review.store_error)})
            return
        _watch_files_through_the_editor(ls)
        try:
            summary = await review.recover()
        except Exception as exc:
            exc = review.recovery_error or exc
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"Stet: {exc}"))
            summary = {"files": 0, "counts": {}, "durationMs": 0, "error": str(exc)}
        # Live sync with other processes and the inbox start once recovery is done.
        ls.live = Live(review)
        await ls.live.start()
        if ls.live.warning:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, ls.live.warning))
        ls.notify_json("stet/restored", summary)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: StetServer, params: Any = None):
        if ls.live is not None:
            await ls.live.stop()
        if ls.review is not None:
            await ls.review.close()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: StetServer, params: types.DidChangeWorkspaceFoldersParams):
        # pygls has already updated its folder list; every folder is a root (the store stays put).
        if ls.review is not None:
            folders = [f.uri for f in ls.workspace.folders.values()]
            roots = []
            for folder in folders:
                try:
                    roots.append(uri_to_path(folder))
                except StetError:
                    log.warning("ignoring workspace folder %s", folder)
            ls.review.ws.set_roots(roots)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: StetServer, params: types.DidChangeWatchedFilesParams):
        if ls.review is None:
            return
        uris = set()
        for change in params.changes:
            try:
                uris.add(ls.review.uri_of(change.uri))
            except StetError:
                continue
        ls.review.outside_changed(uris)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: StetServer, params: types.DidOpenTextDocumentParams):
        if ls.review is not None:
            td = params.text_document
            ls.review.opened(td.uri, td.text, td.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: StetServer, params: types.DidChangeTextDocumentParams):
        if ls.review is None:
            return
        changes = []
        for c in params.content_changes:
            if isinstance(c, types.TextDocumentContentChangePartial):
                r = c.range
                rng = {
                    "start": {"line": r.start.line, "character": r.start.character},
                    "end": {"line": r.end.line, "character": r.end.character},
                }
                changes.append((rng, c.text))
            else:
                changes.append((None, c.text))
        ls.review.changed(params.text_document.uri, params.text_document.version, changes)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: StetServer, params: types.DidSaveTextDocumentParams):
        if ls.review is not None and ls.review.store is not None:
            await ls.review.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: StetServer, params: types.DidCloseTextDocumentParams):
        if ls.review is not None:
            await ls.review.closed(params.text_document.uri)

    def _doc_hunks(ls: StetServer, client_uri: str):
        review = ls.review
        if review is None:
            return None, []
        try:
            uri = review.uri_of(client_uri)
        except StetError:
            return None, []
        return uri, review.open_hunks(uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: StetServer, params: types.CodeLensParams):
        uri, hunks = _doc_hunks(ls, params.text_document.uri)
        return present.code_lenses(hunks, params.text_document.uri) if hunks else []

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: StetServer, params: types.CodeActionParams):
        uri, hunks = _doc_hunks(ls, params.text_document.uri)
        if not hunks:
            return []
        doc = ls.review.docs.get(uri)
        end = doc.end() if doc else None
        first, last = params.range.start.line, params.range.end.line
        actions = present.code_actions(hunks, params.text_document.uri, first, last, end)
        td = ls.client_capabilities.text_document
        if not (td and td.code_action and td.code_action.code_action_literal_support):
            return [a.command for a in actions]  # an older client takes bare commands
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: StetServer, params: types.HoverParams):
        uri, hunks = _doc_hunks(ls, params.text_document.uri)
        line = params.position.line
        for h in hunks:
            if present.covers(h, line, line):
                td = ls.client_capabilities.text_document
                formats = td.hover.content_format if td and td.hover else None
                return present.hover(h, markdown=not formats or types.MarkupKind.Markdown in formats)
        return None

    @server.feature("stet/propose")
    @guarded
    async def propose(ls: StetServer, params: Any):
        review = await _ready(ls)
        p = P.obj(params, "stet/propose")
        files = P.workspace_edit(p.get("edit"))
        return await review.propose(
            P.req_str(p, "proposalId"),
            files,
            task_id=P.opt_str(p, "taskId"),
            agent=P.opt_str(p, "agent"),
            message=P.opt_str(p, "message"),
        )

    @server.feature("stet/listHunks")
    @guarded
    async def list_hunks(ls: StetServer, params: Any):
        review = await _ready(ls)
        p = P.obj(params if params is not None else {}, "stet/listHunks")
        uri = P.opt_str(p, "uri")
        hunks = review.list(
            uri=review.uri_of(uri) if uri else None,
            statuses=P.statuses(p),
            proposal_id=P.opt_str(p, "proposalId"),
            task_id=P.opt_str(p, "taskId"),
        )
        return {"hunks": [h.state() for h in hunks]}

    @server.feature("stet/taskContext")
    @guarded
    async def task_context(ls: StetServer, params: Any):
        review = await _ready(ls)
        p = P.obj(params, "stet/taskContext")
        context = await Tasks(review).context(P.req_str(p, "taskId"))
        if p.get("markdown") is True:  # the `stet resume` text too, for clients that show it
            context["markdown"] = render_resume(context)
        return context

    def decision(action: str, scope: str):
        async def run(ls: StetServer, *args):
            review = await _ready(ls)
            p = P.one_object(args, f"stet.{action}")
            common = dict(request_id=P.opt_str(p, "requestId"), feedback=P.opt_str(p, "feedback"))
            if scope == "hunks":
                text = P.opt_str(p, "text")
                if text is not None and action != "accept":
                    raise InvalidParams("`text` is only for stet.accept")
                states = await review.decide(
                    action, P.hunk_ids(p), expected=P.expected_versions(p), text=text, **common
                )
            elif scope == "file":
                states = await review.decide(action, uri=P.req_str(p, "uri"), **common)
            else:
                states = await review.decide(
                    action, proposal_id=P.opt_str(p, "proposalId"), task_id=P.opt_str(p, "taskId"), **common
                )
            return {"hunks": states}

        return guarded(run)

    for name, action, scope in (
        ("stet.accept", "accept", "hunks"),
        ("stet.reject", "reject", "hunks"),
        ("stet.undo", "undo", "hunks"),
        ("stet.acceptFile", "accept", "file"),
        ("stet.rejectFile", "reject", "file"),
        ("stet.acceptAll", "accept", "all"),
        ("stet.rejectAll", "reject", "all"),
    ):
        server.command(name)(decision(action, scope))

    return server


def serve(db_path: str | None = None) -> None:
    logging.basicConfig(level=os.environ.get("STET_LOG", "WARNING"), format="stet %(levelname)s %(name)s: %(message)s")
    build(db_path).start_io()
