"""`stet mcp --http HOST:PORT`: the same MCP server over the SDK's streamable HTTP transport, for
agents on other machines (a container, a VM, a cloud sandbox).

Every request must carry `Authorization: Bearer <token>`; the token is made on first use
and kept in `.stet/mcp-token` (mode 0600; see workspace/own.py for what is refused there). A
request without it, or with another, is answered 401 before it reaches MCP: nothing is read
or stored. This module imports the MCP SDK only to serve: the token is written first. It listens on 127.0.0.1
unless told otherwise; the tools, their answers and their idempotency are those of stdio
(one review, opened once for the process, serves every session).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import sys

from ..errors import InvalidParams
from ..workspace import own

TYPE_CHECKING = False  # light imports only until the token is written
if TYPE_CHECKING:
    from typing import Any

TOKEN_FILE = "mcp-token"


def token_path(db_path: str) -> str:
    return os.path.join(own.home_path(os.path.dirname(db_path)), TOKEN_FILE)


def ensure_token(db_path: str) -> str:
    """The bearer token, made (random, 0600, written whole before it appears) the first time.
    A token file Stet did not make (a symlink, a hard link, another user's, readable by
    others) is refused and left as it is (NotStets)."""
    return own.secret(os.path.dirname(db_path), TOKEN_FILE, own.new_token, lambda token: len(token) >= 32)


def parse_address(text: str) -> tuple[str, int]:
    """`PORT`, `:PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to 127.0.0.1."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidParams(f"--http takes HOST:PORT (e.g. 127.0.0.1:8765), not {text!r}")
    return host, int(port)


class BearerGuard:
    """ASGI middleware: an HTTP request without the right bearer token is answered 401 here."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)  # the lifespan: opens the review once
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):
            return await self.app(scope, receive, send)
        body = json.dumps(
            {"error": "unauthorized", "message": "missing or wrong bearer token (see .stet/mcp-token)"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="stet"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def serve_http(
    db_path: str, roots: list[str], address: str, agent: str | None = None, token_beside: str | None = None
) -> None:
    host, port = parse_address(address)
    token_beside = token_beside or db_path
    token = ensure_token(token_beside)  # first: an agent waiting for it need not wait for the imports

    import uvicorn

    from .server import _State, build

    logging.basicConfig(level=logging.WARNING, format="stet mcp %(levelname)s: %(message)s")
    state = _State()
    server = build(db_path, roots, agent, state)
    app = BearerGuard(server.streamable_http_app(host=host), token)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"stet mcp: serving http://{shown}:{port}/mcp for {roots[0]}; bearer token in {token_path(token_beside)}",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
    finally:
        if state.review is not None:
            state.review.stop_now()
