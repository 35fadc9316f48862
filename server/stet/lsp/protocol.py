"""The JSON-RPC protocol layer: every message gets an answer, malformed or not.

pygls would drop some malformed requests silently (no answer at all) and walk every
custom message through cattrs; Stet's protocol answers each with a JSON-RPC error and
keeps custom params as plain JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from ..domain.text import lone_surrogate
from ..errors import StetError, StoreUnavailable
from ..operations import offered_by

log = logging.getLogger(__name__)


def _keep_raw(obj: dict[str, Any], cls: type) -> Any:
    # Params of custom methods stay plain JSON (pygls would turn them into namedtuples and
    # lose keys that are not identifiers, such as the uris of WorkspaceEdit.changes).
    fields = {f: obj.get(f) for f in ("id", "method", "jsonrpc", "params", "result") if f in cls.__annotations__}
    return cls(**fields)


def make_converter() -> Any:
    converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _keep_raw)
    return converter


class _Dropped:
    """A message already answered with an error; handle_message ignores it."""

    jsonrpc = "dropped"


def _valid_id(msg_id: Any) -> bool:
    return msg_id is None or isinstance(msg_id, (str, int, float)) and not isinstance(msg_id, bool)


# Requests that change the review (the operations table's, and executeCommand: Stet's commands
# are its decisions): once one runs, its answer is its result, never RequestCancelled - a
# decision committed and carried out must not be reported as not made.
MUTATIONS = frozenset({*(str(op.lsp) for op in offered_by("lsp") if op.mutating), types.WORKSPACE_EXECUTE_COMMAND})


class StetProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._mutating: set[Any] = set()  # ids of mutations in progress
        self._initialize_seen = False

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        if method_name in MUTATIONS:
            self._mutating.add(msg_id)
        super()._handle_request(msg_id, method_name, params)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        self._mutating.discard(msg_id)
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, JsonRpcException) and exc.code != JsonRpcInternalError.CODE:
            # An answer the contract foresees (the store cannot be used, an unknown hunk, a
            # conflict): the client gets it, the log one line - not pygls' traceback at ERROR.
            self._request_futures.pop(msg_id, None)
            level = logging.WARNING if exc.code == StoreUnavailable.code else logging.INFO
            log.log(level, "request %s answered with error %s: %s", msg_id, exc.code, " ".join(exc.message.split()))
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _check_handler_result(self, future: Any) -> None:
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, StetError):  # a notification's foreseen failure (the store cannot be used)
            log.warning("%s", " ".join(exc.message.split()))
            return
        super()._check_handler_result(future)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # LSP lets a server answer a cancelled request with its result; for a mutation that is
        # the only truthful answer (it may already be committed and written).
        if msg_id in self._mutating:
            return
        super()._handle_cancel_notification(msg_id)

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

    def structure_message(self, data: dict[str, Any]) -> Any:
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
            self.send_error(
                msg_id if _valid_id(msg_id) else None, -32600, "Invalid Request: not a JSON-RPC 2.0 message"
            )
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
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        if self._initialize_seen:  # one review per process: a second initialize changes nothing
            raise JsonRpcInvalidRequest("Invalid Request: the server is already initialized")
        self._initialize_seen = True
        # Stet speaks UTF-16 columns, which every client supports (docs/protocol.md, ranges).
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        return (yield from super().lsp_initialize(params))

    # Stet keeps its own copy of open documents (LSP line breaks, UTF-16, anchors), so the
    # builtin handlers only forward to ours instead of also maintaining pygls' copy.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
